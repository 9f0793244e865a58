//! Office Math (OMML, `m:oMath`) as LaTeX, the form docling gives equations. Read as plain text,
//! an equation loses what makes it one (`a2+b2=c2` for a² + b² = c²). No maintained Rust crate
//! reads OMML (the JavaScript ones go through MathML and would need the part twice across the
//! seam), so the structures Word writes are mapped here: scripts, fractions, radicals, n-ary
//! operators, delimiters, functions, accents, bars, limits, equation arrays and matrices; any
//! other element gives its content. Nesting deeper than `MAX_DEPTH` is read as its text.

use quick_xml::events::BytesStart;

use super::{attr, local};

const MAX_DEPTH: usize = 64;
/// Elements nested deeper are not kept as nodes (their text joins the deepest kept one), so that
/// neither reading nor dropping a hostile equation recurses without bound.
const MAX_NESTING: usize = MAX_DEPTH + 16;

#[derive(Debug, Default)]
pub(super) struct Node {
    name: String,
    /// Its `m:val` (properties: `m:chr`, `m:begChr`, `m:type`, `m:degHide`, ...).
    val: Option<String>,
    text: String,
    children: Vec<Node>,
}

/// Builds the tree of one `m:oMath` or `m:oMathPara` from the part's events.
#[derive(Default)]
pub(super) struct Builder {
    stack: Vec<Node>,
    /// Elements open below `MAX_NESTING`, not kept.
    unkept: usize,
}

impl Builder {
    pub(super) fn start(e: &BytesStart<'_>) -> Self {
        let mut b = Self::default();
        b.open(e);
        b
    }

    pub(super) fn open(&mut self, e: &BytesStart<'_>) {
        if self.stack.len() >= MAX_NESTING {
            self.unkept += 1;
            return;
        }
        self.stack.push(Node {
            name: local(e.name().as_ref()).to_string(),
            val: attr(e, "val"),
            ..Node::default()
        });
    }

    pub(super) fn empty(&mut self, e: &BytesStart<'_>) {
        self.open(e);
        self.close();
    }

    pub(super) fn text(&mut self, text: &str) {
        if let Some(n) = self.stack.last_mut() {
            n.text.push_str(text);
        }
    }

    /// Closes the innermost element; the root when it was the last one open.
    pub(super) fn close(&mut self) -> Option<Node> {
        if self.unkept > 0 {
            self.unkept -= 1;
            return None;
        }
        let node = self.stack.pop()?;
        match self.stack.last_mut() {
            Some(parent) => {
                parent.children.push(node);
                None
            }
            None => Some(node),
        }
    }
}

impl Node {
    fn child(&self, name: &str) -> Option<&Node> {
        self.children.iter().find(|c| c.name == name)
    }

    /// A property of this element (`m:chr` in its `m:naryPr`, ...): its `m:val`.
    fn prop(&self, name: &str) -> Option<&str> {
        self.children
            .iter()
            .filter(|c| c.name.ends_with("Pr"))
            .flat_map(|p| p.children.iter())
            .find(|c| c.name == name)
            .map(|c| c.val.as_deref().unwrap_or(""))
    }

    fn on(&self, name: &str) -> bool {
        self.prop(name)
            .is_some_and(|v| matches!(v, "" | "1" | "on" | "true"))
    }

    fn all_text(&self) -> String {
        let mut s = self.text.clone();
        for c in &self.children {
            s.push_str(&c.all_text());
        }
        s
    }
}

/// The equation as LaTeX: `$…$` inline, `$$…$$` for a display equation (`m:oMathPara`).
pub(super) fn latex(root: &Node) -> String {
    let body = convert(root, 0).trim().to_string();
    if body.is_empty() {
        return String::new();
    }
    if root.name == "oMathPara" {
        format!("$${body}$$")
    } else {
        format!("${body}$")
    }
}

fn of(node: Option<&Node>, depth: usize) -> String {
    node.map(|n| convert(n, depth + 1))
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// Each child named `name`, as LaTeX.
fn each(node: &Node, name: &str, depth: usize) -> Vec<String> {
    node.children
        .iter()
        .filter(|c| c.name == name)
        .map(|c| convert(c, depth + 1).trim().to_string())
        .collect()
}

fn children(node: &Node, depth: usize) -> String {
    node.children
        .iter()
        .filter(|c| !c.name.ends_with("Pr"))
        .map(|c| convert(c, depth + 1))
        .collect()
}

fn convert(node: &Node, depth: usize) -> String {
    if depth > MAX_DEPTH {
        return escape(&node.all_text());
    }
    let d = depth;
    let part = |name: &str| of(node.child(name), d);
    match node.name.as_str() {
        "t" => symbols(&node.text),
        "oMathPara" => each(node, "oMath", d).join(" \\\\ "),
        "sSup" => format!("{}^{{{}}}", part("e"), part("sup")),
        "sSub" => format!("{}_{{{}}}", part("e"), part("sub")),
        "sSubSup" => format!("{}_{{{}}}^{{{}}}", part("e"), part("sub"), part("sup")),
        "sPre" => format!("{{}}_{{{}}}^{{{}}}{}", part("sub"), part("sup"), part("e")),
        "f" => match node.prop("type") {
            Some("noBar") => format!(
                "\\genfrac{{}}{{}}{{0pt}}{{}}{{{}}}{{{}}}",
                part("num"),
                part("den")
            ),
            Some("lin" | "skw") => format!("{}/{}", part("num"), part("den")),
            _ => format!("\\frac{{{}}}{{{}}}", part("num"), part("den")),
        },
        "rad" => {
            let degree = part("deg");
            if node.on("degHide") || degree.is_empty() {
                format!("\\sqrt{{{}}}", part("e"))
            } else {
                format!("\\sqrt[{degree}]{{{}}}", part("e"))
            }
        }
        "nary" => {
            let op = node.prop("chr").filter(|c| !c.is_empty()).unwrap_or("∫");
            let mut s = nary(op);
            let (sub, sup) = (part("sub"), part("sup"));
            if !node.on("subHide") {
                s.push_str(&format!("_{{{sub}}}"));
            }
            if !node.on("supHide") {
                s.push_str(&format!("^{{{sup}}}"));
            }
            then(s, &part("e"))
        }
        "d" => {
            let open = node.prop("begChr").unwrap_or("(");
            let close = node.prop("endChr").unwrap_or(")");
            let sep = node.prop("sepChr").unwrap_or("|");
            let inner = each(node, "e", d);
            format!(
                "\\left{}{}\\right{}",
                delimiter(open),
                inner.join(&symbols(sep)),
                delimiter(close)
            )
        }
        "func" => {
            let name = part("fName");
            let known = [
                "sin", "cos", "tan", "cot", "sec", "csc", "sinh", "cosh", "tanh", "log", "ln",
                "exp", "lim", "max", "min", "det", "arg", "deg", "dim", "gcd", "inf", "sup",
                "arcsin", "arccos", "arctan",
            ];
            // The name's leading word (`lim` in `lim_{n}`), where LaTeX has a command for it.
            let head = name
                .find(|c: char| !c.is_ascii_alphabetic())
                .unwrap_or(name.len());
            let name = if known.contains(&&name[..head]) {
                format!("\\{name}")
            } else {
                name
            };
            then(name, &part("e"))
        }
        "acc" => {
            let command = match node.prop("chr").unwrap_or("\u{302}") {
                "\u{303}" | "~" => "tilde",
                "\u{307}" => "dot",
                "\u{308}" => "ddot",
                "\u{304}" | "\u{305}" | "¯" => "bar",
                "\u{20d7}" | "→" => "vec",
                "\u{30c}" => "check",
                "\u{301}" => "acute",
                "\u{300}" => "grave",
                "\u{306}" => "breve",
                _ => "hat",
            };
            format!("\\{command}{{{}}}", part("e"))
        }
        "bar" => match node.prop("pos") {
            Some("top") => format!("\\overline{{{}}}", part("e")),
            _ => format!("\\underline{{{}}}", part("e")),
        },
        "groupChr" => match node.prop("pos") {
            Some("top") => format!("\\overbrace{{{}}}", part("e")),
            _ => format!("\\underbrace{{{}}}", part("e")),
        },
        "limLow" => format!("{}_{{{}}}", part("e"), part("lim")),
        "limUpp" => format!("{}^{{{}}}", part("e"), part("lim")),
        "eqArr" => {
            let rows = each(node, "e", d);
            if rows.len() == 1 {
                rows.concat()
            } else {
                format!("\\begin{{array}}{{c}}{}\\end{{array}}", rows.join(" \\\\ "))
            }
        }
        "m" => {
            let rows: Vec<String> = node
                .children
                .iter()
                .filter(|c| c.name == "mr")
                .map(|r| each(r, "e", d + 1).join(" & "))
                .collect();
            format!("\\begin{{matrix}}{}\\end{{matrix}}", rows.join(" \\\\ "))
        }
        // Word's run properties and the like carry no content.
        name if name.ends_with("Pr") => String::new(),
        _ => children(node, d),
    }
}

/// `a` followed by `b`, apart where `a` ends in a command's name and `b` starts with a letter
/// (`\\sin x`, not `\\sinx`).
fn then(mut a: String, b: &str) -> String {
    let command = a
        .rfind('\\')
        .is_some_and(|at| a.len() > at + 1 && a[at + 1..].chars().all(|c| c.is_ascii_alphabetic()));
    if command && b.starts_with(|c: char| c.is_alphabetic()) {
        a.push(' ');
    }
    a.push_str(b);
    a
}

fn nary(op: &str) -> String {
    let command = match op {
        "∑" => "sum",
        "∏" => "prod",
        "∐" => "coprod",
        "∫" => "int",
        "∬" => "iint",
        "∭" => "iiint",
        "∮" => "oint",
        "∯" => "oiint",
        "∰" => "oiiint",
        "⋃" => "bigcup",
        "⋂" => "bigcap",
        "⋁" => "bigvee",
        "⋀" => "bigwedge",
        "⨁" => "bigoplus",
        "⨂" => "bigotimes",
        "⨀" => "bigodot",
        "⨄" => "biguplus",
        other => return symbols(other),
    };
    format!("\\{command}")
}

fn delimiter(c: &str) -> String {
    match c {
        "" => ".".into(),
        "{" => "\\{".into(),
        "}" => "\\}".into(),
        "⟨" | "〈" => "\\langle".into(),
        "⟩" | "〉" => "\\rangle".into(),
        "|" => "|".into(),
        "‖" => "\\|".into(),
        "⌊" => "\\lfloor".into(),
        "⌋" => "\\rfloor".into(),
        "⌈" => "\\lceil".into(),
        "⌉" => "\\rceil".into(),
        other => escape(other),
    }
}

fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '{' | '}' | '#' | '%' | '&' | '_' | '$' => {
                out.push('\\');
                out.push(c);
            }
            '\\' => out.push_str("\\backslash "),
            _ => out.push(c),
        }
    }
    out
}

/// A run's text with the symbols LaTeX spells as commands spelled so (` \pi `).
fn symbols(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let command = match c {
            'α' => "alpha",
            'β' => "beta",
            'γ' => "gamma",
            'δ' => "delta",
            'ε' => "epsilon",
            'ϵ' => "epsilon",
            'ζ' => "zeta",
            'η' => "eta",
            'θ' => "theta",
            'ι' => "iota",
            'κ' => "kappa",
            'λ' => "lambda",
            'μ' => "mu",
            'ν' => "nu",
            'ξ' => "xi",
            'π' => "pi",
            'ρ' => "rho",
            'σ' => "sigma",
            'τ' => "tau",
            'υ' => "upsilon",
            'φ' => "phi",
            'ϕ' => "phi",
            'χ' => "chi",
            'ψ' => "psi",
            'ω' => "omega",
            'Γ' => "Gamma",
            'Δ' => "Delta",
            'Θ' => "Theta",
            'Λ' => "Lambda",
            'Ξ' => "Xi",
            'Π' => "Pi",
            'Σ' => "Sigma",
            'Φ' => "Phi",
            'Ψ' => "Psi",
            'Ω' => "Omega",
            '∞' => "infty",
            '×' => "times",
            '÷' => "div",
            '±' => "pm",
            '∓' => "mp",
            '·' | '⋅' => "cdot",
            '≤' => "leq",
            '≥' => "geq",
            '≠' => "neq",
            '≈' => "approx",
            '≡' => "equiv",
            '∼' => "sim",
            '∝' => "propto",
            '∈' => "in",
            '∉' => "notin",
            '⊂' => "subset",
            '⊆' => "subseteq",
            '⊃' => "supset",
            '⊇' => "supseteq",
            '∩' => "cap",
            '∪' => "cup",
            '∅' => "emptyset",
            '∀' => "forall",
            '∃' => "exists",
            '¬' => "neg",
            '∧' => "wedge",
            '∨' => "vee",
            '→' => "rightarrow",
            '←' => "leftarrow",
            '↔' => "leftrightarrow",
            '⇒' => "Rightarrow",
            '⇔' => "Leftrightarrow",
            '∂' => "partial",
            '∇' => "nabla",
            '…' => "ldots",
            '⋯' => "cdots",
            '°' => "circ",
            '′' => "prime",
            'ℏ' => "hbar",
            _ => {
                match c {
                    '−' => out.push('-'),
                    _ => out.push_str(&escape(c.encode_utf8(&mut [0; 4]))),
                }
                continue;
            }
        };
        out.push_str(&format!(" \\{command} "));
    }
    out
}
