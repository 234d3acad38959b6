//! One declaration per parameter: name, type, default, accepted range, inspector slider, unit
//! and one-line doc of every scalar generator parameter (issue 25).
//!
//! Each settings struct declares its table (`PARAMS`, a `[ParamSpec<Self>]`) right next to
//! its fields; the defaults in the table are the struct's `DEFAULT_*` constants, which its
//! `Default` uses too (a test pins `Default` to the table). From the tables come:
//!
//! * the range checks of [`IslandParams::validate`](crate::IslandParams::validate) and of the
//!   stages' own `validate` ([`check_all`]); cross-field checks stay hand-written there;
//! * the parameter tables of `docs/inspector.md` and `godot_project/tests/data/parameter_schema.json`
//!   (`cargo xtask docs`; a test fails when the checked-in files are stale);
//! * through that JSON, the GDScript test `test_parameter_schema.gd`, which fails when a
//!   `ProceduralIsland` property's range hint or default drifts from the table (the node's
//!   `#[export(range = ...)]` attributes are literals gdext reads at compile time).
//!
//! Adding a parameter: see "Adding a parameter" in `docs/architecture.md`.

/// What a parameter holds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    /// `bool`.
    Bool,
    /// An integer (`u32`, `u64`).
    Int,
    /// `f32`.
    Float,
    /// A Rust enum, given to Godot as an int; the names in their numbers' order (the Godot
    /// constants end with them).
    Enum(&'static [&'static str]),
}

/// A parameter's value, as read from a settings struct.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// A `bool`.
    Bool(bool),
    /// An integer or an enum's number.
    Int(i64),
    /// An `f32`.
    Float(f32),
}

/// What the generator accepts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Check {
    /// Every value (bools, enums, the seed).
    Any,
    /// Finite and within `min..=max`.
    Range(f32, f32),
    /// 0, or finite and within `min..=max`.
    ZeroOrRange(f32, f32),
    /// Finite, greater than 0 and at most [`MAX_POSITIVE`].
    Positive,
    /// Finite and greater than 0 (no upper limit).
    PositiveFinite,
    /// Finite and at least 0 (no upper limit).
    NonNegative,
    /// Checked by hand in [`IslandParams::validate`](crate::IslandParams::validate); the text
    /// says what is accepted.
    Custom(&'static str),
}

/// Largest value a [`Check::Positive`] parameter accepts (as for every length of the generator).
pub const MAX_POSITIVE: f32 = 1.0e7;

/// The inspector slider of a parameter (Godot `PROPERTY_HINT_RANGE`), which may span less than
/// the accepted range.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Slider {
    /// Slider start.
    pub min: f32,
    /// Slider end.
    pub max: f32,
    /// Step, if the property gives one.
    pub step: Option<f32>,
    /// The slider lets you type less than `min`.
    pub or_less: bool,
    /// The slider lets you type more than `max`.
    pub or_greater: bool,
    /// Unit shown after the value (`m`, `°`, ...); empty for none.
    pub suffix: &'static str,
}

impl Slider {
    /// A slider from `min` to `max`.
    pub const fn new(min: f32, max: f32) -> Slider {
        Slider {
            min,
            max,
            step: None,
            or_less: false,
            or_greater: false,
            suffix: "",
        }
    }
    /// With a step.
    pub const fn step(self, step: f32) -> Slider {
        Slider {
            step: Some(step),
            ..self
        }
    }
    /// Letting you type more than `max`.
    pub const fn or_greater(self) -> Slider {
        Slider {
            or_greater: true,
            ..self
        }
    }
    /// Letting you type less than `min`.
    pub const fn or_less(self) -> Slider {
        Slider {
            or_less: true,
            ..self
        }
    }
    /// With a unit suffix.
    pub const fn suffix(self, suffix: &'static str) -> Slider {
        Slider { suffix, ..self }
    }
}

/// One parameter of the settings struct `S`.
pub struct ParamSpec<S> {
    /// Field name in `S` (the core path is the section's name, a dot and this).
    pub field: &'static str,
    /// Name of the `ProceduralIsland` property, if the node exposes it.
    pub property: Option<&'static str>,
    /// What it holds.
    pub kind: Kind,
    /// Default (the struct's `DEFAULT_*` constant).
    pub default: Value,
    /// What the generator accepts.
    pub check: Check,
    /// The node's inspector slider, if it has a range hint.
    pub slider: Option<Slider>,
    /// Unit (`m`, `m²`, `°`, ...); empty when dimensionless.
    pub unit: &'static str,
    /// One-line description (the inspector reference's "what it does").
    pub doc: &'static str,
    /// Reads the value.
    pub get: fn(&S) -> Value,
}

impl<S> ParamSpec<S> {
    const fn new(
        field: &'static str,
        kind: Kind,
        default: Value,
        check: Check,
        unit: &'static str,
        doc: &'static str,
        get: fn(&S) -> Value,
    ) -> Self {
        ParamSpec {
            field,
            property: None,
            kind,
            default,
            check,
            slider: None,
            unit,
            doc,
            get,
        }
    }
    /// An `f32` parameter.
    pub const fn float(
        field: &'static str,
        default: f32,
        check: Check,
        unit: &'static str,
        doc: &'static str,
        get: fn(&S) -> Value,
    ) -> Self {
        Self::new(
            field,
            Kind::Float,
            Value::Float(default),
            check,
            unit,
            doc,
            get,
        )
    }
    /// An integer parameter.
    pub const fn int(
        field: &'static str,
        default: i64,
        check: Check,
        unit: &'static str,
        doc: &'static str,
        get: fn(&S) -> Value,
    ) -> Self {
        Self::new(field, Kind::Int, Value::Int(default), check, unit, doc, get)
    }
    /// A `bool` parameter.
    pub const fn boolean(
        field: &'static str,
        default: bool,
        doc: &'static str,
        get: fn(&S) -> Value,
    ) -> Self {
        Self::new(
            field,
            Kind::Bool,
            Value::Bool(default),
            Check::Any,
            "",
            doc,
            get,
        )
    }
    /// An enum parameter: its names in their numbers' order and the default's number.
    pub const fn enumeration(
        field: &'static str,
        names: &'static [&'static str],
        default: i64,
        doc: &'static str,
        get: fn(&S) -> Value,
    ) -> Self {
        Self::new(
            field,
            Kind::Enum(names),
            Value::Int(default),
            Check::Any,
            "",
            doc,
            get,
        )
    }
    /// Exposed as the node's property `name` (no range hint).
    pub const fn property(self, name: &'static str) -> Self {
        ParamSpec {
            property: Some(name),
            ..self
        }
    }
    /// Exposed as the node's property `name` with the inspector slider `slider`.
    pub const fn slider(self, name: &'static str, slider: Slider) -> Self {
        ParamSpec {
            property: Some(name),
            slider: Some(slider),
            ..self
        }
    }
}

/// A [`ParamSpec`] without its struct: what the docs and the JSON for the GDScript test show.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamInfo {
    /// Dotted core path, e.g. `erosion.talus_angle`.
    pub path: String,
    /// Inspector group of the docs (`island`, `fbm`, ..., see [`GROUPS`]).
    pub group: &'static str,
    /// See [`ParamSpec::property`].
    pub property: Option<&'static str>,
    /// See [`ParamSpec::kind`].
    pub kind: Kind,
    /// See [`ParamSpec::default`].
    pub default: Value,
    /// See [`ParamSpec::check`].
    pub check: Check,
    /// See [`ParamSpec::slider`].
    pub slider: Option<Slider>,
    /// See [`ParamSpec::unit`].
    pub unit: &'static str,
    /// See [`ParamSpec::doc`].
    pub doc: &'static str,
}

/// A parameter that failed its [`Check`]: the field and the reason.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckError {
    /// Field name within its struct.
    pub field: &'static str,
    /// Why, e.g. `must be between 1 and 16, got 0`.
    pub message: String,
}

impl Check {
    /// Whether `v` passes; the reason when it does not.
    pub fn check(self, v: Value) -> Result<(), String> {
        let (f, shown) = match v {
            Value::Bool(_) => return Ok(()),
            Value::Int(i) => (i as f32, i.to_string()),
            Value::Float(x) => (x, x.to_string()),
        };
        let int = matches!(v, Value::Int(_));
        match self {
            Check::Any | Check::Custom(_) => Ok(()),
            Check::Range(lo, hi) | Check::ZeroOrRange(lo, hi) => {
                if matches!(self, Check::ZeroOrRange(..)) && f == 0.0 {
                    return Ok(());
                }
                if !int && !f.is_finite() {
                    return Err(format!("must be a finite number, got {shown}"));
                }
                if f < lo || f > hi {
                    return Err(format!("must be between {lo} and {hi}, got {shown}"));
                }
                Ok(())
            }
            Check::Positive => {
                if !f.is_finite() || f <= 0.0 {
                    return Err(format!("must be a finite number > 0, got {shown}"));
                }
                if f > MAX_POSITIVE {
                    return Err(format!("must be at most 1e7, got {shown}"));
                }
                Ok(())
            }
            Check::PositiveFinite => {
                if !f.is_finite() || f <= 0.0 {
                    return Err(format!("must be a finite number > 0, got {shown}"));
                }
                Ok(())
            }
            Check::NonNegative => {
                if !f.is_finite() || f < 0.0 {
                    return Err(format!("must be a finite number >= 0, got {shown}"));
                }
                Ok(())
            }
        }
    }
}

/// Check every parameter of `specs` on `s`, in table order; the first failure is returned.
pub fn check_all<S>(specs: &[ParamSpec<S>], s: &S) -> Result<(), CheckError> {
    for p in specs {
        p.check.check((p.get)(s)).map_err(|message| CheckError {
            field: p.field,
            message,
        })?;
    }
    Ok(())
}

/// `specs` without their struct, under `section` (`""` for [`IslandParams`]' own fields) and in
/// the docs group `group`.
pub fn infos<S>(specs: &[ParamSpec<S>], section: &str, group: &'static str) -> Vec<ParamInfo> {
    specs
        .iter()
        .map(|p| ParamInfo {
            path: if section.is_empty() {
                p.field.to_string()
            } else {
                format!("{section}.{}", p.field)
            },
            group,
            property: p.property,
            kind: p.kind,
            default: p.default,
            check: p.check,
            slider: p.slider,
            unit: p.unit,
            doc: p.doc,
        })
        .collect()
}

/// Whether `get` on the struct's `Default` gives every table's `default` (the test that pins
/// `Default` to the tables); the mismatches as `path: default vs table`.
pub fn default_mismatches<S: Default>(specs: &[ParamSpec<S>], section: &str) -> Vec<String> {
    let d = S::default();
    specs
        .iter()
        .filter(|p| (p.get)(&d) != p.default)
        .map(|p| {
            format!(
                "{section}.{}: Default gives {:?}, the table {:?}",
                p.field,
                (p.get)(&d),
                p.default
            )
        })
        .collect()
}

/// The docs groups (inspector groups of the node) in their order: (id, title).
pub const GROUPS: [(&str, &str); 12] = [
    ("island", "Island"),
    ("fbm", "fBm"),
    ("value_noise", "Value Noise"),
    ("diamond_square", "Diamond-Square"),
    ("gaussian", "Gaussian Islands"),
    ("detail", "Detail"),
    ("shape", "Shape"),
    ("coast", "Coast"),
    ("river", "River"),
    ("erosion", "Erosion"),
    ("biomes", "Biomes"),
    ("splat", "Splat"),
];
