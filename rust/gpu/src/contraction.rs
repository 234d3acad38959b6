//! A static check for fused multiply-add (issue 24, "correct everywhere"): every place in the
//! WGSL where a driver may contract a product into the sum or difference that uses it.
//!
//! SPIR-V lets a driver fuse `a * b + c` into one FMA (the product is then not rounded), and
//! NVIDIA's and AMD's compilers do; Rust never fuses, so a fused GPU result differs from the CPU
//! function of the same name by an ULP or more. Lavapipe fuses too, but only where LLVM happens
//! to, so the bit-exact parity tests on lavapipe see some unguarded products and not others, and
//! the stages compared with a tolerance see none. This check needs no GPU: it parses every
//! registered shader with naga and lists each float add or subtract one of whose operands is a
//! *raw product*, and each builtin whose implementation may fuse internally (`dot`, `mix`,
//! `length`, …). A raw product is a float `*` that has not passed through `rounded()` (the guard
//! in `common.wgsl`, whose result the optimiser cannot see through), seen through:
//!
//! * negation, swizzles and member access, vector construction and splats;
//! * `let` bindings (naga's named expressions are the expressions themselves);
//! * local variables: a load of a `var` that some statement stored a raw product into;
//! * calls: the result of a function that returns a raw product, and an argument of a function
//!   that some call site passes a raw product for (a driver inlines and then fuses).
//!
//! The test at the bottom asserts that no shader has such a site; `rounded` itself is the only
//! function allowed to hold one (it is the guard).

use std::collections::{BTreeSet, HashMap};
use wgpu::naga;
use wgpu::naga::{
    BinaryOperator, Block, Expression, Function, Handle, MathFunction, Module, ScalarKind,
    Statement, TypeInner, UnaryOperator,
};

/// Builtins whose implementation is a sum of products the driver may fuse (or is an FMA).
const FUSING_BUILTINS: [MathFunction; 13] = [
    MathFunction::Dot,
    MathFunction::Outer,
    MathFunction::Cross,
    MathFunction::Distance,
    MathFunction::Length,
    MathFunction::Normalize,
    MathFunction::FaceForward,
    MathFunction::Reflect,
    MathFunction::Refract,
    MathFunction::Fma,
    MathFunction::Mix,
    MathFunction::SmoothStep,
    MathFunction::Determinant,
];

/// One place where a driver may fuse.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Site {
    /// The function (or entry point) it is in.
    pub function: String,
    /// 1-based line in the checked source.
    pub line: usize,
    /// The source text of the expression.
    pub text: String,
}

/// Functions allowed to hold a raw product next to a sum: the guard itself.
const GUARDS: [&str; 1] = ["rounded"];

/// Every contractible site of a validated module (`src` is its source, for the report).
pub(crate) fn contractible_sites(module: &Module, src: &str) -> Vec<Site> {
    let info = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::default(),
    )
    .validate(module)
    .expect("a registered shader validates");
    // (name, function, its info, its handle: `None` for an entry point, which nothing calls)
    type Fun<'m> = (
        String,
        &'m Function,
        &'m naga::valid::FunctionInfo,
        Option<Handle<Function>>,
    );
    let mut funs: Vec<Fun> = module
        .functions
        .iter()
        .map(|(h, f)| (f.name.clone().unwrap_or_default(), f, &info[h], Some(h)))
        .collect();
    for (i, ep) in module.entry_points.iter().enumerate() {
        funs.push((ep.name.clone(), &ep.function, info.get_entry_point(i), None));
    }
    // Which functions return a raw product, and which arguments receive one: iterate to the
    // fixed point (both grow only).
    let mut calls = Calls::default();
    loop {
        let before = (calls.returns_raw.len(), calls.raw_args.len());
        let (mut new_returns, mut new_args) = (BTreeSet::new(), BTreeSet::new());
        for &(_, f, fi, me) in &funs {
            let a = Analysis::new(module, f, fi, me, &calls);
            walk(&f.body, &mut |s| match s {
                Statement::Return { value: Some(v) } if a.raw(*v) => {
                    if let Some(h) = me {
                        new_returns.insert(h);
                    }
                }
                Statement::Call {
                    function,
                    arguments,
                    ..
                } => {
                    for (i, arg) in arguments.iter().enumerate() {
                        if a.raw(*arg) {
                            new_args.insert((*function, i as u32));
                        }
                    }
                }
                _ => {}
            });
        }
        calls.returns_raw.extend(new_returns);
        calls.raw_args.extend(new_args);
        if (calls.returns_raw.len(), calls.raw_args.len()) == before {
            break;
        }
    }
    let mut out = BTreeSet::new();
    for (name, f, fi, me) in &funs {
        if GUARDS.contains(&name.as_str()) {
            continue;
        }
        let a = Analysis::new(module, f, fi, *me, &calls);
        for (h, e) in f.expressions.iter() {
            let hit = match *e {
                Expression::Binary {
                    op: BinaryOperator::Add | BinaryOperator::Subtract,
                    left,
                    right,
                } => a.float(h) && (a.raw(left) || a.raw(right)),
                Expression::Math { fun, arg, .. } => FUSING_BUILTINS.contains(&fun) && a.float(arg),
                _ => false,
            };
            if hit {
                let span = f.expressions.get_span(h);
                let line = span.location(src).line_number as usize;
                let text = src
                    .get(span.to_range().unwrap_or(0..0))
                    .unwrap_or("")
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ");
                out.insert(Site {
                    function: name.clone(),
                    line,
                    text,
                });
            }
        }
    }
    out.into_iter().collect()
}

/// Calls `f` on every statement of `block`, nested blocks included.
fn walk(block: &Block, f: &mut dyn FnMut(&Statement)) {
    for s in block.iter() {
        f(s);
        match s {
            Statement::Block(b) => walk(b, f),
            Statement::If { accept, reject, .. } => {
                walk(accept, f);
                walk(reject, f);
            }
            Statement::Switch { cases, .. } => {
                for c in cases {
                    walk(&c.body, f);
                }
            }
            Statement::Loop {
                body, continuing, ..
            } => {
                walk(body, f);
                walk(continuing, f);
            }
            _ => {}
        }
    }
}

/// What is known of one function's expressions.
struct Analysis<'a> {
    module: &'a Module,
    f: &'a Function,
    fi: &'a naga::valid::FunctionInfo,
    me: Option<Handle<Function>>,
    calls: &'a Calls,
    /// Local variables some statement stores a raw product into.
    raw_locals: BTreeSet<Handle<naga::LocalVariable>>,
}

/// What is known across calls.
#[derive(Default)]
struct Calls {
    /// Functions that return a raw product.
    returns_raw: BTreeSet<Handle<Function>>,
    /// Arguments some call site passes a raw product for.
    raw_args: BTreeSet<(Handle<Function>, u32)>,
}

impl<'a> Analysis<'a> {
    fn new(
        module: &'a Module,
        f: &'a Function,
        fi: &'a naga::valid::FunctionInfo,
        me: Option<Handle<Function>>,
        calls: &'a Calls,
    ) -> Analysis<'a> {
        let mut a = Analysis {
            module,
            f,
            fi,
            me,
            calls,
            raw_locals: BTreeSet::new(),
        };
        // Locals every store puts a raw product into (none from a constant initialiser): a
        // local that also holds other values is merged at a phi, which a driver does not fuse
        // through (the loop-carried `amp = amp * persistence` of the fBm). A stored local may
        // feed another store: iterate.
        loop {
            let mut all_raw: HashMap<Handle<naga::LocalVariable>, bool> = f
                .local_variables
                .iter()
                .filter(|(_, v)| v.init.is_none())
                .map(|(h, _)| (h, true))
                .collect();
            let mut stored = BTreeSet::new();
            walk(&f.body, &mut |s| {
                if let Statement::Store { pointer, value } = s {
                    if let Some(v) = a.local_of(*pointer) {
                        stored.insert(v);
                        if !a.raw(*value) {
                            all_raw.insert(v, false);
                        }
                    }
                }
            });
            let found: BTreeSet<_> = all_raw
                .into_iter()
                .filter(|(v, raw)| *raw && stored.contains(v))
                .map(|(v, _)| v)
                .collect();
            if found == a.raw_locals {
                break;
            }
            a.raw_locals = found;
        }
        a
    }

    /// The local variable a pointer expression points into (through member and index access).
    fn local_of(&self, p: Handle<Expression>) -> Option<Handle<naga::LocalVariable>> {
        match self.f.expressions[p] {
            Expression::LocalVariable(v) => Some(v),
            Expression::Access { base, .. } | Expression::AccessIndex { base, .. } => {
                self.local_of(base)
            }
            _ => None,
        }
    }

    /// The expression's type is a float scalar, vector or matrix.
    fn float(&self, h: Handle<Expression>) -> bool {
        match self.fi[h].ty.inner_with(&self.module.types) {
            TypeInner::Scalar(s) | TypeInner::Vector { scalar: s, .. } => {
                s.kind == ScalarKind::Float
            }
            TypeInner::Matrix { .. } => true,
            _ => false,
        }
    }

    /// The expression is a float literal or constant that is a power of two (or its negative):
    /// a product with it is exact (barring overflow and subnormals), so fusing it into a sum
    /// changes nothing.
    fn power_of_two(&self, h: Handle<Expression>) -> bool {
        let lit = match self.f.expressions[h] {
            Expression::Literal(l) => Some(l),
            Expression::Constant(c) => {
                match self.module.global_expressions[self.module.constants[c].init] {
                    Expression::Literal(l) => Some(l),
                    _ => None,
                }
            }
            _ => None,
        };
        match lit {
            Some(naga::Literal::F32(v)) => {
                let b = v.abs().to_bits();
                v.is_finite() && v != 0.0 && b & 0x007f_ffff == 0
            }
            Some(naga::Literal::AbstractFloat(v)) => {
                let b = v.abs().to_bits();
                v.is_finite() && v != 0.0 && b & 0x000f_ffff_ffff_ffff == 0
            }
            _ => false,
        }
    }

    /// The expression is (or carries) an unrounded float product.
    fn raw(&self, h: Handle<Expression>) -> bool {
        match self.f.expressions[h] {
            Expression::Binary {
                op: BinaryOperator::Multiply,
                left,
                right,
            } => self.float(h) && !self.power_of_two(left) && !self.power_of_two(right),
            Expression::Unary {
                op: UnaryOperator::Negate,
                expr,
            } => self.raw(expr),
            Expression::AccessIndex { base, .. } | Expression::Access { base, .. } => {
                self.local_of(base).is_none() && self.raw(base)
            }
            Expression::Swizzle { vector, .. } => self.raw(vector),
            Expression::Splat { value, .. } => self.raw(value),
            Expression::Compose { ref components, .. } => components.iter().any(|c| self.raw(*c)),
            Expression::Load { pointer } => self
                .local_of(pointer)
                .is_some_and(|v| self.raw_locals.contains(&v)),
            Expression::FunctionArgument(i) => self
                .me
                .is_some_and(|me| self.calls.raw_args.contains(&(me, i))),
            Expression::CallResult(fun) => self.calls.returns_raw.contains(&fun),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sites of a pass module, each named `file.wgsl:line function`.
    fn sites(name: &str, body: &str) -> Vec<Site> {
        let src = crate::passes::source(body);
        let module = naga::front::wgsl::parse_str(&src).expect("parses");
        // `source` is the uniforms' prelude, common.wgsl and the pass, one line apart.
        let prelude = crate::uniforms::wgsl_prelude().lines().count() + 1;
        let common = include_str!("../../../shaders/common.wgsl").lines().count() + 1;
        let mut s = contractible_sites(&module, &src);
        for site in &mut s {
            let (file, line) = if site.line > prelude + common {
                (format!("{name}.wgsl"), site.line - prelude - common)
            } else if site.line > prelude {
                ("common.wgsl".to_string(), site.line - prelude)
            } else {
                ("uniforms prelude".to_string(), site.line)
            };
            site.function = format!("{file}:{line} {}", site.function);
        }
        s
    }

    /// The check sees a product through every route a driver can follow to fuse it, and not
    /// through the guard.
    #[test]
    fn finds_products_that_feed_sums() {
        let body = r#"
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
fn prod(a: f32, b: f32) -> f32 { return a * b; }
fn add_to(p: f32, c: f32) -> f32 { return p + c; }
@compute @workgroup_size(1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let a = out[0];
    let b = out[1];
    let direct = a * b + 1.0f;
    let exact = a * 0.5f + b * -4.0f;
    let neg = 1.0f - a * b;
    let p = a * b;
    let through_let = p + 2.0f;
    var acc = 0.0f;
    acc += a * b;
    var v = a * b;
    let from_var = v + 3.0f;
    let from_call = prod(a, b) + 4.0f;
    let into_call = add_to(a * b, 5.0f);
    let vec = vec2<f32>(a * b, a) + vec2<f32>(1.0f);
    let builtin = mix(a, b, 0.5f);
    let guarded = mul_r(a, b) + 6.0f;
    let guarded2 = rounded(a * b) - 7.0f;
    let int_ok = i32(gid.x) * 3 + 1;
    out[2] = direct + exact + neg + through_let + acc + from_var + from_call + into_call + vec.x
        + builtin + guarded + guarded2 + f32(int_ok);
}
"#;
        let found = sites("t", body);
        let texts: Vec<&str> = found.iter().map(|s| s.text.as_str()).collect();
        for want in [
            "a * b + 1.0f",
            "1.0f - a * b",
            "p + 2.0f",
            "acc += a * b",
            "v + 3.0f",
            "prod(a, b) + 4.0f",
            "p + c",
            "vec2<f32>(a * b, a) + vec2<f32>(1.0f)",
            "mix",
        ] {
            assert!(
                texts.iter().any(|t| t.contains(want)),
                "{want} not found in {texts:?}"
            );
        }
        for not in [
            "a * 0.5f + b * -4.0f",
            "mul_r(a, b) + 6.0f",
            "rounded(a * b) - 7.0f",
            "* 3 + 1",
        ] {
            assert!(
                !texts.iter().any(|t| t.contains(not)),
                "{not} is guarded or integer, yet listed: {texts:?}"
            );
        }
        // Nothing in common.wgsl itself (the noise is guarded).
        assert!(
            found.iter().all(|s| s.function.starts_with("t.wgsl:")),
            "{found:?}"
        );
    }

    /// No registered shader leaves a product unguarded where a driver may fuse it into a sum.
    #[test]
    fn no_shader_has_a_contractible_product() {
        // The shared prelude and common.wgsl come first in every module: list each of their
        // sites once (same function, line and text).
        let mut seen = BTreeSet::new();
        let mut all = Vec::new();
        for (name, body) in crate::shaders::SHADERS {
            for s in sites(name, body) {
                if seen.insert((s.function.clone(), s.text.clone())) {
                    all.push(s);
                }
            }
        }
        let list: Vec<String> = all
            .iter()
            .map(|s| format!("{}: {}", s.function, s.text))
            .collect();
        assert!(
            all.is_empty(),
            "{} places where a driver may fuse a product into a sum (guard them with mul_r / \
             rounded, see docs/gpu-backend.md):\n{}",
            all.len(),
            list.join("\n")
        );
    }
}
