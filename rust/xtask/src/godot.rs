//! Finding (or installing) a Godot 4 binary, and the packages needed to render with it.
//!
//! Order of preference:
//! 1. `$GODOT` (must be Godot 4.3 or newer, otherwise it is an error),
//! 2. `godot` / `godot4` on `PATH` when `--version` says 4.3 or newer,
//! 3. a private copy of Debian sid's `godot` package (4.6.x) in
//!    `${XDG_CACHE_HOME:-$HOME/.cache}/procedural_island/godot/`, installed on first use.
//!
//! Sid's `godot` needs a newer glibc than this machine's, so the whole dependency closure is
//! downloaded with apt into private directories (an empty dpkg status file, so apt computes every
//! dependency), unpacked with `dpkg-deb -x` into a prefix, and the binary is started through that
//! prefix's own dynamic loader with `--library-path` pointing into the prefix.
//!
//! Started that way, Godot's own executable is the loader, and the editor cannot launch the game
//! (F5/F6 re-run the editor's executable: `ld-linux-x86-64.so.2: unrecognized option '--path'`).
//! When `patchelf` is installed, the prefix also gets `usr/bin/godot-runnable`: a copy of the
//! binary whose ELF interpreter and library path point into the prefix, an ordinary executable
//! that the editor can re-launch; it is then preferred ([`runnable_launcher`]).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Oldest Godot version the addon supports.
const MIN_VERSION: (u32, u32) = (4, 3);
/// Default keyring used when the machine's sources do not name one.
const DEFAULT_KEYRING: &str = "/usr/share/keyrings/debian-archive-keyring.gpg";
/// Where the machine's own apt sources live (deb822, then one-line format).
const DEB822_SOURCES: &str = "/etc/apt/sources.list.d/debian.sources";
const ONE_LINE_SOURCES: &str = "/etc/apt/sources.list";

/// How Godot is started: a program plus leading arguments (the loader and its options).
#[derive(Clone, Debug)]
pub struct GodotLauncher {
    pub program: PathBuf,
    pub pre_args: Vec<String>,
    /// Version string reported by `--version`.
    pub version: String,
}

impl GodotLauncher {
    pub fn command(&self) -> Command {
        let mut c = Command::new(&self.program);
        c.args(&self.pre_args);
        c
    }

    /// Shell-like rendering of how Godot is started.
    pub fn describe(&self) -> String {
        let mut s = shell_quote(&self.program.to_string_lossy());
        for a in &self.pre_args {
            s.push(' ');
            s.push_str(&shell_quote(a));
        }
        s
    }
}

fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:,@%".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// A `Command` that starts Godot 4.3+ (installing it first when needed). Callers add arguments.
#[allow(dead_code)] // public entry point for other tasks; `godot_launcher` is used directly here
pub fn godot_command() -> Result<Command, String> {
    Ok(godot_launcher()?.command())
}

/// Locate (or install) Godot and report how it is started.
pub fn godot_launcher() -> Result<GodotLauncher, String> {
    if let Some(g) = std::env::var_os("GODOT").filter(|g| !g.is_empty()) {
        let l = GodotLauncher {
            program: PathBuf::from(&g),
            pre_args: vec![],
            version: String::new(),
        };
        return match probe(l) {
            Ok(l) => Ok(l),
            Err(e) => Err(format!("$GODOT={}: {e}", PathBuf::from(g).display())),
        };
    }
    for name in ["godot", "godot4"] {
        if let Some(p) = find_on_path(name) {
            let l = GodotLauncher {
                program: p.clone(),
                pre_args: vec![],
                version: String::new(),
            };
            match probe(l) {
                Ok(l) => return Ok(l),
                Err(e) => eprintln!("xtask: ignoring {}: {e}", p.display()),
            }
        }
    }
    let dir = cache_dir()?;
    let prefix = dir.join("prefix");
    if prefix.join(".complete").is_file() {
        match probe(prefix_launcher(&prefix)) {
            Ok(l) => return Ok(runnable_launcher(&prefix).unwrap_or(l)),
            Err(e) => eprintln!(
                "xtask: cached Godot in {} does not work ({e}); reinstalling",
                prefix.display()
            ),
        }
    }
    install_into(&dir)?;
    let l = probe(prefix_launcher(&prefix))
        .map_err(|e| format!("freshly installed Godot does not start: {e}"))?;
    Ok(runnable_launcher(&prefix).unwrap_or(l))
}

/// Name of the patched copy of the private Godot in the prefix's `usr/bin`.
const RUNNABLE: &str = "godot-runnable";

/// The private Godot as an ordinary executable (see the module doc): `usr/bin/godot-runnable`,
/// made once with `patchelf` (interpreter and `DT_RPATH` into the prefix; the two PulseAudio
/// libraries' absolute `RUNPATH` pointed into the prefix too). `None`, with a hint, when
/// `patchelf` is missing or the copy does not start: the loader launcher is used then.
pub fn runnable_launcher(prefix: &Path) -> Option<GodotLauncher> {
    let lib = prefix.join("usr/lib/x86_64-linux-gnu");
    let bin = prefix.join("usr/bin").join(RUNNABLE);
    let launcher = GodotLauncher {
        program: bin.clone(),
        pre_args: vec![],
        version: String::new(),
    };
    if bin.is_file() {
        if let Ok(l) = probe(launcher.clone()) {
            return Some(l);
        }
    }
    let Some(patchelf) = find_on_path("patchelf") else {
        eprintln!(
            "xtask: note: the private Godot runs through its loader, so the editor cannot run              scenes (F5/F6); install `patchelf` and run `cargo xtask godot-path` again to make              it an ordinary executable"
        );
        return None;
    };
    let patch = |args: &[&std::ffi::OsStr]| -> bool {
        Command::new(&patchelf)
            .args(args)
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    let tmp = bin.with_extension("tmp");
    let ld = lib.join("ld-linux-x86-64.so.2");
    let ok = fs::copy(prefix.join("usr/bin/godot"), &tmp).is_ok()
        && patch(&[
            "--set-interpreter".as_ref(),
            ld.as_os_str(),
            "--set-rpath".as_ref(),
            lib.as_os_str(),
            "--force-rpath".as_ref(),
            tmp.as_os_str(),
        ]);
    let pulse = lib.join("pulseaudio");
    let ok = ok
        && ["libpulse.so.0", "libpulse-simple.so.0"]
            .iter()
            .all(|name| {
                let f = lib.join(name);
                !f.exists()
                    || patch(&[
                        "--set-rpath".as_ref(),
                        pulse.as_os_str(),
                        fs::canonicalize(&f).unwrap_or(f).as_os_str(),
                    ])
            })
        && fs::rename(&tmp, &bin).is_ok();
    let _ = fs::remove_file(&tmp);
    if !ok {
        eprintln!("xtask: note: patchelf could not make {}", bin.display());
        return None;
    }
    match probe(launcher) {
        Ok(l) => {
            eprintln!(
                "xtask: {} is an ordinary executable (the editor can run scenes)",
                bin.display()
            );
            Some(l)
        }
        Err(e) => {
            eprintln!("xtask: note: {} does not start ({e})", bin.display());
            let _ = fs::remove_file(&bin);
            None
        }
    }
}

/// `${XDG_CACHE_HOME:-$HOME/.cache}/procedural_island/godot`
pub fn cache_dir() -> Result<PathBuf, String> {
    let base = match std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()) {
        Some(x) => PathBuf::from(x),
        None => {
            let home = std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .ok_or("neither XDG_CACHE_HOME nor HOME is set")?;
            PathBuf::from(home).join(".cache")
        }
    };
    Ok(base.join("procedural_island").join("godot"))
}

fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    fs::metadata(p)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

fn prefix_launcher(prefix: &Path) -> GodotLauncher {
    let lib = prefix.join("usr/lib/x86_64-linux-gnu");
    let libpath = format!("{}:{}", lib.display(), lib.join("pulseaudio").display());
    GodotLauncher {
        program: lib.join("ld-linux-x86-64.so.2"),
        pre_args: vec![
            "--library-path".into(),
            libpath,
            prefix.join("usr/bin/godot").to_string_lossy().into_owned(),
        ],
        version: String::new(),
    }
}

/// Run `--headless --version` and accept the launcher when it reports 4.3 or newer.
fn probe(mut l: GodotLauncher) -> Result<GodotLauncher, String> {
    let out = l
        .command()
        .args(["--headless", "--version"])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", l.program.display()))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let version = text
        .lines()
        .map(str::trim)
        .find(|line| parse_version(line).is_some())
        .map(str::to_string)
        .ok_or_else(|| {
            format!(
                "`--version` printed no version (exit {:?}): {}{}",
                out.status.code(),
                text.trim(),
                String::from_utf8_lossy(&out.stderr).trim()
            )
        })?;
    let (maj, min) = parse_version(&version).unwrap();
    if (maj, min) < MIN_VERSION {
        return Err(format!(
            "version {version} is older than {}.{}",
            MIN_VERSION.0, MIN_VERSION.1
        ));
    }
    l.version = version;
    Ok(l)
}

/// `"4.6.3.stable.debian..."` -> `(4, 6)`.
fn parse_version(s: &str) -> Option<(u32, u32)> {
    let mut it = s.split('.');
    let maj: u32 = it.next()?.parse().ok()?;
    let min: u32 = it.next()?.parse().ok()?;
    Some((maj, min))
}

/// An apt mirror of the machine's normal (non-security) archive.
#[derive(Debug, PartialEq)]
struct Mirror {
    uri: String,
    keyring: Option<String>,
}

/// Parse deb822 text (`/etc/apt/sources.list.d/*.sources`).
fn mirror_from_deb822(text: &str) -> Option<Mirror> {
    for stanza in text.split("\n\n") {
        let mut types = "";
        let mut uris = "";
        let mut suites = "";
        let mut keyring = None;
        for line in stanza.lines() {
            if line.trim_start().starts_with('#') {
                continue;
            }
            let Some((k, v)) = line.split_once(':') else {
                continue;
            };
            let v = v.trim();
            match k.trim().to_ascii_lowercase().as_str() {
                "types" => types = v,
                "uris" => uris = v,
                "suites" => suites = v,
                "signed-by" if v.starts_with('/') && !v.contains('\n') => {
                    keyring = Some(v.to_string())
                }
                _ => {}
            }
        }
        if !types.split_whitespace().any(|t| t == "deb") {
            continue;
        }
        if suites.split_whitespace().any(|s| s.contains("security")) {
            continue;
        }
        if let Some(uri) = uris.split_whitespace().find(|u| !u.contains("security")) {
            return Some(Mirror {
                uri: uri.to_string(),
                keyring,
            });
        }
    }
    None
}

/// Parse one-line sources (`deb [opts] URI suite comps`).
fn mirror_from_one_line(text: &str) -> Option<Mirror> {
    for line in text.lines() {
        let line = line.trim();
        let Some(rest) = line.strip_prefix("deb ") else {
            continue;
        };
        let mut rest = rest.trim_start();
        let mut keyring = None;
        if rest.starts_with('[') {
            let end = rest.find(']')?;
            for opt in rest[1..end].split_whitespace() {
                if let Some(k) = opt.strip_prefix("signed-by=") {
                    keyring = Some(k.to_string());
                }
            }
            rest = rest[end + 1..].trim_start();
        }
        let mut f = rest.split_whitespace();
        let (Some(uri), Some(suite)) = (f.next(), f.next()) else {
            continue;
        };
        if uri.contains("security") || suite.contains("security") {
            continue;
        }
        return Some(Mirror {
            uri: uri.to_string(),
            keyring,
        });
    }
    None
}

fn machine_mirror() -> Result<Mirror, String> {
    if let Ok(t) = fs::read_to_string(DEB822_SOURCES) {
        if let Some(m) = mirror_from_deb822(&t) {
            return Ok(m);
        }
    }
    if let Ok(t) = fs::read_to_string(ONE_LINE_SOURCES) {
        if let Some(m) = mirror_from_one_line(&t) {
            return Ok(m);
        }
    }
    Err(format!(
        "no Debian archive URI found in {DEB822_SOURCES} or {ONE_LINE_SOURCES}"
    ))
}

/// Run `cmd` with its output captured (the install runs beside cargo's build, whose output it
/// would cut into): on failure the error carries the output's last lines.
fn run_checked(cmd: &mut Command, what: &str) -> Result<(), String> {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{what}: cannot start: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<&str> = text.lines().collect();
    let tail = lines[lines.len().saturating_sub(30)..].join("\n");
    Err(format!("{what} failed ({}):\n{tail}", out.status))
}

/// Download sid's `godot` with its full dependency closure and unpack it into `dir/prefix`.
fn install_into(dir: &Path) -> Result<(), String> {
    for tool in ["apt-get", "dpkg-deb"] {
        if find_on_path(tool).is_none() {
            return Err(format!(
                "no Godot 4.3+ found (set $GODOT or put `godot` on PATH); installing one needs `{tool}`, which is missing"
            ));
        }
    }
    let mirror = machine_mirror()?;
    let keyring = mirror
        .keyring
        .clone()
        .filter(|k| Path::new(k).is_file())
        .unwrap_or_else(|| DEFAULT_KEYRING.to_string());
    eprintln!(
        "xtask: installing Godot from Debian sid ({}) into {}",
        mirror.uri,
        dir.display()
    );
    let started = std::time::Instant::now();

    let apt = dir.join("apt");
    for sub in ["lists/partial", "archives/partial", "cache", "state"] {
        fs::create_dir_all(apt.join(sub))
            .map_err(|e| format!("create {}: {e}", apt.join(sub).display()))?;
    }
    let status = apt.join("status");
    fs::write(&status, "").map_err(|e| format!("write {}: {e}", status.display()))?;
    let sources = apt.join("sources.list");
    let line = format!("deb [signed-by={keyring}] {} sid main\n", mirror.uri);
    fs::write(&sources, line).map_err(|e| format!("write {}: {e}", sources.display()))?;

    let opts: Vec<String> = vec![
        format!("Dir::State={}", apt.join("state").display()),
        format!("Dir::State::status={}", status.display()),
        format!("Dir::State::Lists={}", apt.join("lists").display()),
        format!("Dir::Etc::SourceList={}", sources.display()),
        "Dir::Etc::SourceParts=-".into(),
        format!("Dir::Cache={}", apt.join("cache").display()),
        format!("Dir::Cache::Archives={}", apt.join("archives").display()),
        "APT::Install-Recommends=false".into(),
        "APT::Install-Suggests=false".into(),
        // Downloads land in private directories; no need to drop to the `_apt` user.
        "APT::Sandbox::User=root".into(),
    ];
    let apt_get = |extra: &[&str]| {
        let mut c = Command::new("apt-get");
        for o in &opts {
            c.arg("-o").arg(o);
        }
        c.args(extra);
        c
    };
    run_checked(
        &mut apt_get(&["-q", "update"]),
        "apt-get update (sid, private lists)",
    )?;
    run_checked(
        &mut apt_get(&["-q", "-y", "install", "--download-only", "godot"]),
        "apt-get install --download-only godot",
    )?;

    // Unpack into a staging prefix and move it into place only when complete.
    let staging = dir.join(format!("prefix.tmp.{}", std::process::id()));
    let _ = fs::remove_dir_all(&staging);
    fs::create_dir_all(&staging).map_err(|e| format!("create {}: {e}", staging.display()))?;
    let mut debs: Vec<PathBuf> = fs::read_dir(apt.join("archives"))
        .map_err(|e| format!("read archives: {e}"))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "deb"))
        .collect();
    debs.sort();
    if !debs.iter().any(|p| {
        p.file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("godot_"))
    }) {
        return Err("apt downloaded no godot_*.deb".into());
    }
    for deb in &debs {
        run_checked(
            Command::new("dpkg-deb").arg("-x").arg(deb).arg(&staging),
            &format!("dpkg-deb -x {}", deb.display()),
        )?;
    }
    let ld = staging.join("usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2");
    let bin = staging.join("usr/bin/godot");
    if !ld.exists() || !bin.is_file() {
        return Err(format!(
            "unpacked prefix lacks {} or {}",
            ld.display(),
            bin.display()
        ));
    }
    fs::write(
        staging.join(".complete"),
        format!("{} packages\n", debs.len()),
    )
    .map_err(|e| format!("write marker: {e}"))?;
    let prefix = dir.join("prefix");
    let _ = fs::remove_dir_all(&prefix);
    fs::rename(&staging, &prefix)
        .map_err(|e| format!("move {} -> {}: {e}", staging.display(), prefix.display()))?;
    // The downloaded archives and package lists are no longer needed (the prefix is the cache).
    for deb in &debs {
        let _ = fs::remove_file(deb);
    }
    let _ = fs::remove_dir_all(apt.join("lists"));
    let _ = fs::remove_dir_all(apt.join("cache"));
    eprintln!(
        "xtask: Godot installed in {:.0} s ({} packages)",
        started.elapsed().as_secs_f64(),
        debs.len()
    );
    Ok(())
}

fn dpkg_installed(pkg: &str) -> bool {
    Command::new("dpkg-query")
        .args(["-W", "-f=${Status}", pkg])
        .stderr(Stdio::null())
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).contains("install ok installed"))
        .unwrap_or(false)
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

/// Packages (from the machine's own suite) needed to render: lavapipe, Xvfb.
/// `patchelf` makes the private Godot an ordinary executable (see [`runnable_launcher`]), which
/// the real-editor check needs to run a scene from the editor.
pub const RENDER_PACKAGES: [&str; 5] = [
    "mesa-vulkan-drivers",
    "libvulkan1",
    "xvfb",
    "xauth",
    "patchelf",
];

/// Install the rendering packages with the machine's apt when they are missing.
pub fn ensure_render_deps() -> Result<(), String> {
    let missing: Vec<&str> = RENDER_PACKAGES
        .iter()
        .copied()
        .filter(|p| !dpkg_installed(p))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    if !is_root() {
        return Err(format!(
            "missing packages for rendering: {} (install them as root: apt-get install -y {})",
            missing.join(" "),
            missing.join(" ")
        ));
    }
    eprintln!("xtask: installing {}", missing.join(" "));
    run_checked(
        Command::new("apt-get").args(["-q", "update"]),
        "apt-get update",
    )?;
    run_checked(
        Command::new("apt-get")
            .env("DEBIAN_FRONTEND", "noninteractive")
            .args(["-q", "install", "-y", "--no-install-recommends"])
            .args(&missing),
        "apt-get install (render deps)",
    )
}

/// The lavapipe ICD manifest on this machine, if any.
pub fn lavapipe_icd() -> Option<PathBuf> {
    let dir = Path::new("/usr/share/vulkan/icd.d");
    let mut found: Vec<PathBuf> = fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("lvp_icd"))
        })
        .collect();
    found.sort();
    found.into_iter().next()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions() {
        assert_eq!(parse_version("4.6.3.stable.debian4.6.3+ds-3"), Some((4, 6)));
        assert_eq!(parse_version("3.2.3.stable"), Some((3, 2)));
        assert_eq!(parse_version("Godot Engine"), None);
        assert!((3, 2) < MIN_VERSION && (4, 6) >= MIN_VERSION && (4, 3) >= MIN_VERSION);
    }

    #[test]
    fn deb822_skips_security() {
        let t = "Types: deb\n# comment\nURIs: http://mirror.example/debian-security\nSuites: bookworm-security\n\
                 Components: main\n\nTypes: deb\nURIs: http://mirror.example/debian\nSuites: bookworm bookworm-updates\n\
                 Components: main\nSigned-By: /usr/share/keyrings/x.gpg\n";
        assert_eq!(
            mirror_from_deb822(t),
            Some(Mirror {
                uri: "http://mirror.example/debian".into(),
                keyring: Some("/usr/share/keyrings/x.gpg".into())
            })
        );
        assert_eq!(
            mirror_from_deb822("Types: deb-src\nURIs: http://a/\nSuites: x\n"),
            None
        );
    }

    #[test]
    fn one_line_sources() {
        let t = "# x\ndeb [arch=amd64 signed-by=/k.gpg] http://m.example/debian bookworm main\n";
        assert_eq!(
            mirror_from_one_line(t),
            Some(Mirror {
                uri: "http://m.example/debian".into(),
                keyring: Some("/k.gpg".into())
            })
        );
        assert_eq!(
            mirror_from_one_line("deb http://m.example/debian-security bookworm-security main\n"),
            None
        );
    }
}
