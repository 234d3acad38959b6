//! Keep this library mapped until the process ends.
//!
//! The core runs on rayon's global thread pool, whose threads live as long as the process:
//! after a job they spin for a moment, then park. When Godot unloads the extension at exit (or
//! on a hot reload), `dlclose` would unmap their code while they still run or could wake up,
//! and the process dies with SIGSEGV after everything else went well (seen in about half of
//! the headless runs that quit right after a `regenerate()`). Pinning the library makes the
//! unload a no-op for the code pages: the parked threads stay valid until the process exits. A
//! hot reload maps the rebuilt file next to the old one, so it still works.
//!
//! Linux/macOS: `dlopen(self, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE)`; Windows:
//! `GetModuleHandleExW(PIN | FROM_ADDRESS)`.

use std::sync::OnceLock;

/// Pin the library that contains this function (once; later calls only read the result).
/// Returns whether the library is pinned.
pub fn pin_library() -> bool {
    static PINNED: OnceLock<bool> = OnceLock::new();
    *PINNED.get_or_init(imp::pin)
}

#[cfg(unix)]
mod imp {
    use std::ffi::{c_char, c_int, c_void};

    #[repr(C)]
    struct DlInfo {
        dli_fname: *const c_char,
        dli_fbase: *mut c_void,
        dli_sname: *const c_char,
        dli_saddr: *mut c_void,
    }

    #[cfg(target_os = "linux")]
    const RTLD_NOW: c_int = 2;
    #[cfg(target_os = "linux")]
    const RTLD_NOLOAD: c_int = 4;
    #[cfg(target_os = "linux")]
    const RTLD_NODELETE: c_int = 0x1000;
    #[cfg(not(target_os = "linux"))]
    const RTLD_NOW: c_int = 2;
    #[cfg(not(target_os = "linux"))]
    const RTLD_NOLOAD: c_int = 0x10;
    #[cfg(not(target_os = "linux"))]
    const RTLD_NODELETE: c_int = 0x80;

    extern "C" {
        fn dladdr(addr: *const c_void, info: *mut DlInfo) -> c_int;
        fn dlopen(filename: *const c_char, flag: c_int) -> *mut c_void;
    }

    pub fn pin() -> bool {
        let mut info = DlInfo {
            dli_fname: std::ptr::null(),
            dli_fbase: std::ptr::null_mut(),
            dli_sname: std::ptr::null(),
            dli_saddr: std::ptr::null_mut(),
        };
        // SAFETY: `dladdr` reads the address of a function of this library and writes `info`.
        let found = unsafe { dladdr(pin as *const c_void, &mut info) };
        if found == 0 || info.dli_fname.is_null() {
            return false;
        }
        // SAFETY: `dli_fname` is the NUL-terminated path of the loaded library (valid while it
        // is loaded, which it is); NOLOAD only takes another reference to it, never loads.
        let handle = unsafe { dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE) };
        // The extra reference is never closed: that is the pin.
        !handle.is_null()
    }
}

#[cfg(windows)]
mod imp {
    use std::ffi::c_void;

    const GET_MODULE_HANDLE_EX_FLAG_PIN: u32 = 0x1;
    const GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS: u32 = 0x4;

    #[link(name = "kernel32")]
    extern "system" {
        fn GetModuleHandleExW(flags: u32, name: *const c_void, module: *mut *mut c_void) -> i32;
    }

    pub fn pin() -> bool {
        let mut module = std::ptr::null_mut();
        // SAFETY: FROM_ADDRESS takes the address of a function of this module; the call writes
        // only `module`.
        unsafe {
            GetModuleHandleExW(
                GET_MODULE_HANDLE_EX_FLAG_PIN | GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS,
                pin as *const c_void,
                &mut module,
            ) != 0
        }
    }
}

#[cfg(not(any(unix, windows)))]
mod imp {
    pub fn pin() -> bool {
        false
    }
}
