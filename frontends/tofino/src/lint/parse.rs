//! A parser for the P4_16 subset `lcmp.p4` is written in: the `#if
//! __TARGET_TOFINO__` preprocessor lines, constants, typedefs, headers and
//! structs, parsers (skipped), controls with actions, tables, extern
//! instances (with `RegisterAction` bodies) and `apply` blocks, and the
//! `Pipeline(...)` instance. Written by hand because no Rust crate parses
//! P4; it is not a general P4 front end, and it refuses what it does not
//! know with a line number rather than guessing.

use std::collections::BTreeMap;

/// A parse failure: line and message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based source line.
    pub line: u32,
    /// What went wrong.
    pub message: String,
}

impl core::fmt::Display for ParseError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl core::error::Error for ParseError {}

fn err<T>(line: u32, message: impl Into<String>) -> Result<T, ParseError> {
    Err(ParseError {
        line,
        message: message.into(),
    })
}

/// Evaluates the `#if`/`#else`/`#endif` lines for `__TARGET_TOFINO__ =
/// target` and blanks `#include` lines and comments, keeping line numbers.
pub fn preprocess(text: &str, target: u32) -> Result<String, ParseError> {
    let text = strip_comments(text);
    let mut out = String::with_capacity(text.len());
    // (this branch is active, some branch of this #if was taken, parent active)
    let mut stack: Vec<(bool, bool, bool)> = Vec::new();
    let active = |stack: &[(bool, bool, bool)]| stack.last().is_none_or(|s| s.0 && s.2);
    for (n, line) in text.lines().enumerate() {
        let ln = n as u32 + 1;
        let t = line.trim();
        if let Some(d) = t.strip_prefix('#') {
            let d = d.trim();
            let (word, rest) = d.split_once(char::is_whitespace).unwrap_or((d, ""));
            match word {
                "include" => {}
                "if" => {
                    let parent = active(&stack);
                    let v = eval_target(rest, target, ln)?;
                    stack.push((v, v, parent));
                }
                "elif" => {
                    let v = eval_target(rest, target, ln)?;
                    let Some(top) = stack.last_mut() else {
                        return err(ln, "#elif without #if");
                    };
                    top.0 = !top.1 && v;
                    top.1 |= v;
                }
                "else" => {
                    let Some(top) = stack.last_mut() else {
                        return err(ln, "#else without #if");
                    };
                    top.0 = !top.1;
                    top.1 = true;
                }
                "endif" => {
                    if stack.pop().is_none() {
                        return err(ln, "#endif without #if");
                    }
                }
                _ => return err(ln, format!("unsupported preprocessor line `#{d}`")),
            }
            out.push('\n');
            continue;
        }
        if active(&stack) {
            out.push_str(line);
        }
        out.push('\n');
    }
    if !stack.is_empty() {
        return err(0, "unterminated #if");
    }
    Ok(out)
}

fn eval_target(cond: &str, target: u32, line: u32) -> Result<bool, ParseError> {
    let c: String = cond.split_whitespace().collect();
    let num = |s: &str| s.parse::<u32>().ok();
    if let Some(v) = c.strip_prefix("__TARGET_TOFINO__==").and_then(num) {
        return Ok(target == v);
    }
    if let Some(v) = c.strip_prefix("__TARGET_TOFINO__!=").and_then(num) {
        return Ok(target != v);
    }
    err(line, format!("unsupported #if condition `{cond}`"))
}

/// Removes `/* */` and `//` comments, keeping newlines.
fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"/*") {
            let end = text[i + 2..].find("*/").map_or(b.len(), |e| i + 2 + e + 2);
            out.extend(text[i..end].chars().filter(|&c| c == '\n'));
            i = end;
        } else if b[i..].starts_with(b"//") {
            let end = text[i..].find('\n').map_or(b.len(), |e| i + e);
            i = end;
        } else if b[i] == b'"' {
            let end = text[i + 1..].find('"').map_or(b.len(), |e| i + 1 + e + 1);
            out.push_str(&text[i..end]);
            i = end;
        } else {
            let c = text[i..].chars().next().unwrap_or(' ');
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// A token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tok {
    /// An identifier or keyword.
    Ident(String),
    /// An integer literal (width prefix dropped).
    Num(u128),
    /// A string literal, without quotes.
    Str(String),
    /// Punctuation.
    Punct(&'static str),
}

#[derive(Clone, Debug)]
struct Token {
    tok: Tok,
    line: u32,
    /// No whitespace between this token and the previous one.
    glued: bool,
}

const PUNCT: [&str; 37] = [
    "|-|", "|+|", "&&", "||", "==", "!=", "<=", ">=", "<<", "++", "{", "}", "(", ")", "[", "]",
    ";", ",", ":", ".", "=", "<", ">", "+", "-", "*", "/", "%", "&", "|", "^", "~", "!", "?", "@",
    "#", "$",
];

fn lex(text: &str) -> Result<Vec<Token>, ParseError> {
    let mut out = Vec::new();
    let mut line = 1u32;
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    let mut glued = false;
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
            i += 1;
            glued = false;
            continue;
        }
        if c.is_whitespace() {
            i += 1;
            glued = false;
            continue;
        }
        let start = i;
        if c.is_ascii_alphabetic() || c == '_' {
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let s: String = chars[start..i].iter().collect();
            out.push(Token {
                tok: Tok::Ident(s),
                line,
                glued,
            });
        } else if c.is_ascii_digit() {
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let s: String = chars[start..i].iter().filter(|&&c| c != '_').collect();
            // `32w0x1F`, `8s3`: drop the width.
            let body = match s.find(['w', 's']) {
                Some(p) if !s.starts_with("0x") && !s.starts_with("0X") => &s[p + 1..],
                _ => s.as_str(),
            };
            let v = if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
                u128::from_str_radix(h, 16)
            } else if let Some(b) = body.strip_prefix("0b").or_else(|| body.strip_prefix("0B")) {
                u128::from_str_radix(b, 2)
            } else {
                body.parse::<u128>()
            };
            let Ok(v) = v else {
                return err(line, format!("bad number `{s}`"));
            };
            out.push(Token {
                tok: Tok::Num(v),
                line,
                glued,
            });
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += 1;
            }
            let s: String = chars[start + 1..i.min(chars.len())].iter().collect();
            i += 1;
            out.push(Token {
                tok: Tok::Str(s),
                line,
                glued,
            });
        } else {
            let rest: String = chars[i..chars.len().min(i + 3)].iter().collect();
            let Some(p) = PUNCT.iter().find(|p| rest.starts_with(**p)) else {
                return err(line, format!("unexpected character `{c}`"));
            };
            i += p.chars().count();
            out.push(Token {
                tok: Tok::Punct(p),
                line,
                glued,
            });
        }
        glued = true;
    }
    Ok(out)
}

/// An expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expr {
    /// A literal.
    Num(u128),
    /// `a.b.c`.
    Path(Vec<String>),
    /// `e[hi:lo]`.
    Slice(Box<Expr>, u32, u32),
    /// `callee(args)`; the callee is a path such as `t.apply` or `r.execute`.
    Call(Box<Expr>, Vec<Expr>),
    /// A binary operation.
    Bin(&'static str, Box<Expr>, Box<Expr>),
    /// A unary operation.
    Un(&'static str, Box<Expr>),
    /// `(type) e`.
    Cast(Type, Box<Expr>),
    /// `{ a, b }`.
    List(Vec<Expr>),
}

/// A statement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stmt {
    /// `lhs = rhs;`
    Assign {
        /// Destination.
        lhs: Expr,
        /// Value.
        rhs: Expr,
        /// Source line.
        line: u32,
    },
    /// `call;`
    Call {
        /// The call expression.
        call: Expr,
        /// Source line.
        line: u32,
    },
    /// `if (cond) then else otherwise`.
    If {
        /// Condition.
        cond: Expr,
        /// Then branch.
        then: Vec<Stmt>,
        /// Else branch (empty if none).
        otherwise: Vec<Stmt>,
    },
}

/// A type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Type {
    /// `bit<N>` or `int<N>`.
    Bits(u32),
    /// A named type, with type arguments.
    Named(String, Vec<Type>),
}

/// A parameter `dir type name`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    /// Its type.
    pub ty: Type,
    /// Its name.
    pub name: String,
}

/// An action.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ActionDecl {
    /// Parameters (action data).
    pub params: Vec<Param>,
    /// Body.
    pub body: Vec<Stmt>,
}

/// A table key field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyDecl {
    /// The matched expression.
    pub expr: Expr,
    /// `exact`, `lpm`, `ternary`, `range`.
    pub kind: String,
}

/// A table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableDecl {
    /// Key fields.
    pub keys: Vec<KeyDecl>,
    /// Action names.
    pub actions: Vec<String>,
    /// Default action name.
    pub default_action: Option<String>,
    /// `size`.
    pub size: u64,
    /// Declaration line.
    pub line: u32,
}

/// An extern instance: `Type(args) name;`, with the body of a
/// `RegisterAction` (its `apply` parameters and statements).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instance {
    /// The extern type.
    pub ty: Type,
    /// Constructor arguments.
    pub args: Vec<Expr>,
    /// `apply` parameters of an initialiser block.
    pub apply_params: Vec<Param>,
    /// `apply` body of an initialiser block.
    pub apply_body: Vec<Stmt>,
}

/// A control block.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ControlDecl {
    /// Parameters.
    pub params: Vec<Param>,
    /// Actions by name.
    pub actions: BTreeMap<String, ActionDecl>,
    /// Tables by name, and their declaration order.
    pub tables: BTreeMap<String, TableDecl>,
    /// Extern instances by name.
    pub instances: BTreeMap<String, Instance>,
    /// Control-local variables by name, with their types.
    pub locals: BTreeMap<String, Type>,
    /// The `apply` block.
    pub apply: Vec<Stmt>,
}

/// A parsed program.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Program {
    /// Constants.
    pub consts: BTreeMap<String, u128>,
    /// Typedefs.
    pub typedefs: BTreeMap<String, Type>,
    /// Headers and structs: fields in order.
    pub structs: BTreeMap<String, Vec<Param>>,
    /// Enums: members in order.
    pub enums: BTreeMap<String, Vec<String>>,
    /// Controls.
    pub controls: BTreeMap<String, ControlDecl>,
    /// The `Pipeline(...)` arguments: parser, control, deparser names.
    pub pipeline: Vec<String>,
}

struct Parser {
    toks: Vec<Token>,
    pos: usize,
}

impl Parser {
    fn line(&self) -> u32 {
        self.toks
            .get(self.pos)
            .or(self.toks.last())
            .map_or(0, |t| t.line)
    }

    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.tok)
    }

    fn peek_at(&self, n: usize) -> Option<&Tok> {
        self.toks.get(self.pos + n).map(|t| &t.tok)
    }

    fn glued_at(&self, n: usize) -> bool {
        self.toks.get(self.pos + n).is_some_and(|t| t.glued)
    }

    fn next(&mut self) -> Option<Tok> {
        let t = self.toks.get(self.pos).map(|t| t.tok.clone());
        self.pos += 1;
        t
    }

    fn is(&self, p: &str) -> bool {
        matches!(self.peek(), Some(Tok::Punct(q)) if *q == p)
    }

    fn is_word(&self, w: &str) -> bool {
        matches!(self.peek(), Some(Tok::Ident(s)) if s == w)
    }

    fn eat(&mut self, p: &str) -> bool {
        if self.is(p) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, p: &str) -> Result<(), ParseError> {
        if self.eat(p) {
            Ok(())
        } else {
            err(
                self.line(),
                format!("expected `{p}`, found {:?}", self.peek()),
            )
        }
    }

    fn ident(&mut self) -> Result<String, ParseError> {
        match self.next() {
            Some(Tok::Ident(s)) => Ok(s),
            t => err(self.line(), format!("expected a name, found {t:?}")),
        }
    }

    fn number(&mut self) -> Result<u128, ParseError> {
        match self.next() {
            Some(Tok::Num(v)) => Ok(v),
            t => err(self.line(), format!("expected a number, found {t:?}")),
        }
    }

    /// Skips from an opening bracket to its match.
    fn skip_balanced(&mut self) -> Result<(), ParseError> {
        let (open, close) = match self.peek() {
            Some(Tok::Punct("{")) => ("{", "}"),
            Some(Tok::Punct("(")) => ("(", ")"),
            Some(Tok::Punct("[")) => ("[", "]"),
            t => return err(self.line(), format!("expected a bracket, found {t:?}")),
        };
        let mut depth = 0usize;
        loop {
            match self.next() {
                Some(Tok::Punct(p)) if p == open => depth += 1,
                Some(Tok::Punct(p)) if p == close => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(());
                    }
                }
                Some(_) => {}
                None => return err(self.line(), format!("unbalanced `{open}`")),
            }
        }
    }

    fn annotations(&mut self) -> Result<Vec<String>, ParseError> {
        let mut out = Vec::new();
        while self.eat("@") {
            out.push(self.ident()?);
            if self.is("(") {
                self.skip_balanced()?;
            }
        }
        Ok(out)
    }

    fn ty(&mut self) -> Result<Type, ParseError> {
        let name = self.ident()?;
        if (name == "bit" || name == "int") && self.eat("<") {
            let w = self.number()?;
            self.expect(">")?;
            return Ok(Type::Bits(w as u32));
        }
        if name == "varbit" && self.eat("<") {
            // Variable width: no fixed width (a header's options).
            self.number()?;
            self.expect(">")?;
            return Ok(Type::Named(name, Vec::new()));
        }
        let mut args = Vec::new();
        if self.eat("<") {
            loop {
                args.push(self.ty()?);
                if self.eat(">") {
                    break;
                }
                self.expect(",")?;
            }
        }
        Ok(Type::Named(name, args))
    }

    fn params(&mut self) -> Result<Vec<Param>, ParseError> {
        self.expect("(")?;
        let mut out = Vec::new();
        while !self.eat(")") {
            self.annotations()?;
            if self.is_word("in") || self.is_word("out") || self.is_word("inout") {
                self.pos += 1;
            }
            let ty = self.ty()?;
            let name = self.ident()?;
            out.push(Param { ty, name });
            if !self.eat(",") {
                self.expect(")")?;
                break;
            }
        }
        Ok(out)
    }

    fn program(&mut self) -> Result<Program, ParseError> {
        let mut p = Program::default();
        while self.peek().is_some() {
            self.annotations()?;
            let line = self.line();
            let word = self.ident()?;
            match word.as_str() {
                "const" => {
                    self.ty()?;
                    let name = self.ident()?;
                    self.expect("=")?;
                    let e = self.expr()?;
                    self.expect(";")?;
                    if let Some(v) = const_value(&e, &p.consts) {
                        p.consts.insert(name, v);
                    }
                }
                "enum" => {
                    let name = self.ident()?;
                    self.expect("{")?;
                    let mut members = Vec::new();
                    while !self.eat("}") {
                        members.push(self.ident()?);
                        if !self.eat(",") {
                            self.expect("}")?;
                            break;
                        }
                    }
                    p.enums.insert(name, members);
                }
                "typedef" => {
                    let ty = self.ty()?;
                    let name = self.ident()?;
                    self.expect(";")?;
                    p.typedefs.insert(name, ty);
                }
                "header" | "struct" => {
                    let name = self.ident()?;
                    self.expect("{")?;
                    let mut fields = Vec::new();
                    while !self.eat("}") {
                        self.annotations()?;
                        let ty = self.ty()?;
                        let f = self.ident()?;
                        self.expect(";")?;
                        fields.push(Param { ty, name: f });
                    }
                    p.structs.insert(name, fields);
                }
                "parser" => {
                    self.ident()?;
                    self.params()?;
                    self.skip_balanced()?;
                }
                "control" => {
                    let name = self.ident()?;
                    let c = self.control()?;
                    p.controls.insert(name, c);
                }
                "Pipeline" => {
                    self.expect("(")?;
                    while !self.eat(")") {
                        p.pipeline.push(self.ident()?);
                        self.expect("(")?;
                        self.expect(")")?;
                        self.eat(",");
                    }
                    self.ident()?;
                    self.expect(";")?;
                }
                "Switch" => {
                    self.skip_balanced()?;
                    self.ident()?;
                    self.expect(";")?;
                }
                _ => return err(line, format!("unexpected top-level `{word}`")),
            }
        }
        Ok(p)
    }

    fn control(&mut self) -> Result<ControlDecl, ParseError> {
        let mut c = ControlDecl {
            params: self.params()?,
            ..ControlDecl::default()
        };
        self.expect("{")?;
        while !self.eat("}") {
            self.annotations()?;
            let line = self.line();
            if self.is_word("action") {
                self.pos += 1;
                let name = self.ident()?;
                let params = self.params()?;
                let body = self.block()?;
                c.actions.insert(name, ActionDecl { params, body });
            } else if self.is_word("table") {
                self.pos += 1;
                let name = self.ident()?;
                let t = self.table(line)?;
                c.tables.insert(name, t);
            } else if self.is_word("apply") {
                self.pos += 1;
                c.apply = self.block()?;
            } else {
                let ty = self.ty()?;
                if !self.is("(") {
                    // A control-local variable: `pin_status_t st0;`.
                    let name = self.ident()?;
                    self.expect(";")?;
                    c.locals.insert(name, ty);
                    continue;
                }
                let args = self.args()?;
                let name = self.ident()?;
                let mut inst = Instance {
                    ty,
                    args,
                    apply_params: Vec::new(),
                    apply_body: Vec::new(),
                };
                if self.eat("=") {
                    self.expect("{")?;
                    while !self.eat("}") {
                        let ret = self.ident()?;
                        let f = self.ident()?;
                        if ret != "void" || f != "apply" {
                            return err(self.line(), "only `void apply(...)` initialisers");
                        }
                        inst.apply_params = self.params()?;
                        inst.apply_body = self.block()?;
                    }
                }
                self.expect(";")?;
                c.instances.insert(name, inst);
            }
        }
        Ok(c)
    }

    fn table(&mut self, line: u32) -> Result<TableDecl, ParseError> {
        let mut t = TableDecl {
            keys: Vec::new(),
            actions: Vec::new(),
            default_action: None,
            size: 0,
            line,
        };
        self.expect("{")?;
        while !self.eat("}") {
            self.eat_word("const");
            let prop = self.ident()?;
            self.expect("=")?;
            match prop.as_str() {
                "key" => {
                    self.expect("{")?;
                    while !self.eat("}") {
                        let expr = self.expr()?;
                        self.expect(":")?;
                        let kind = self.ident()?;
                        self.annotations()?;
                        self.expect(";")?;
                        t.keys.push(KeyDecl { expr, kind });
                    }
                }
                "actions" => {
                    self.expect("{")?;
                    while !self.eat("}") {
                        self.annotations()?;
                        t.actions.push(self.ident()?);
                        self.expect(";")?;
                    }
                }
                "default_action" => {
                    t.default_action = Some(self.ident()?);
                    self.args()?;
                    self.expect(";")?;
                }
                "size" => {
                    t.size = self.number()? as u64;
                    self.expect(";")?;
                }
                _ => {
                    while !self.eat(";") {
                        if self.next().is_none() {
                            return err(line, "unterminated table property");
                        }
                    }
                }
            }
        }
        Ok(t)
    }

    fn eat_word(&mut self, w: &str) -> bool {
        if self.is_word(w) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn args(&mut self) -> Result<Vec<Expr>, ParseError> {
        self.expect("(")?;
        let mut out = Vec::new();
        while !self.eat(")") {
            out.push(self.expr()?);
            if !self.eat(",") {
                self.expect(")")?;
                break;
            }
        }
        Ok(out)
    }

    fn block(&mut self) -> Result<Vec<Stmt>, ParseError> {
        self.expect("{")?;
        let mut out = Vec::new();
        while !self.eat("}") {
            out.extend(self.stmt()?);
        }
        Ok(out)
    }

    fn stmt(&mut self) -> Result<Vec<Stmt>, ParseError> {
        let line = self.line();
        if self.is("{") {
            return self.block();
        }
        if self.eat_word("if") {
            self.expect("(")?;
            let cond = self.expr()?;
            self.expect(")")?;
            let then = self.stmt()?;
            let otherwise = if self.eat_word("else") {
                self.stmt()?
            } else {
                Vec::new()
            };
            return Ok(vec![Stmt::If {
                cond,
                then,
                otherwise,
            }]);
        }
        if self.eat_word("return") || self.eat_word("exit") {
            self.expect(";")?;
            return err(line, "`return`/`exit` are not supported");
        }
        let lhs = self.expr()?;
        if self.eat("=") {
            let rhs = self.expr()?;
            self.expect(";")?;
            return Ok(vec![Stmt::Assign { lhs, rhs, line }]);
        }
        self.expect(";")?;
        match lhs {
            Expr::Call(..) => Ok(vec![Stmt::Call { call: lhs, line }]),
            _ => err(line, "a statement must assign or call"),
        }
    }

    fn expr(&mut self) -> Result<Expr, ParseError> {
        self.binary(0)
    }

    /// The binary operator at the cursor and its token count (`>` `>`
    /// glued is a right shift).
    fn binop(&self) -> Option<(&'static str, usize)> {
        match self.peek()? {
            Tok::Punct(">") if self.glued_at(1) && self.peek_at(1) == Some(&Tok::Punct(">")) => {
                Some((">>", 2))
            }
            Tok::Punct(p) => Some((p, 1)),
            _ => None,
        }
    }

    fn binary(&mut self, min: u8) -> Result<Expr, ParseError> {
        let mut lhs = self.unary()?;
        while let Some((op, n)) = self.binop() {
            let Some(prec) = precedence(op) else { break };
            if prec < min {
                break;
            }
            self.pos += n;
            let rhs = self.binary(prec + 1)?;
            lhs = Expr::Bin(op, Box::new(lhs), Box::new(rhs));
        }
        Ok(lhs)
    }

    fn unary(&mut self) -> Result<Expr, ParseError> {
        for op in ["!", "~", "-"] {
            if self.eat(op) {
                let e = self.unary()?;
                return Ok(Expr::Un(op, Box::new(e)));
            }
        }
        // A cast: `(bit<N>)` or `(Name)` followed by an operand.
        if self.is("(") {
            let save = self.pos;
            self.pos += 1;
            if let Some(Tok::Ident(w)) = self.peek().cloned() {
                let is_type = w == "bit" || w == "int" || w.ends_with("_t");
                if is_type {
                    if let Ok(ty) = self.ty() {
                        if self.eat(")") && !self.is(")") && !self.is(";") {
                            let e = self.unary()?;
                            return Ok(Expr::Cast(ty, Box::new(e)));
                        }
                    }
                }
            }
            self.pos = save;
        }
        self.postfix()
    }

    fn postfix(&mut self) -> Result<Expr, ParseError> {
        let mut e = self.primary()?;
        loop {
            if self.eat(".") {
                let f = self.ident()?;
                e = match e {
                    Expr::Path(mut p) => {
                        p.push(f);
                        Expr::Path(p)
                    }
                    _ => return err(self.line(), "member of a non-path"),
                };
            } else if self.is("(") {
                let args = self.args()?;
                e = Expr::Call(Box::new(e), args);
            } else if self.eat("[") {
                let hi = self.number()? as u32;
                self.expect(":")?;
                let lo = self.number()? as u32;
                self.expect("]")?;
                e = Expr::Slice(Box::new(e), hi, lo);
            } else {
                return Ok(e);
            }
        }
    }

    fn primary(&mut self) -> Result<Expr, ParseError> {
        match self.next() {
            Some(Tok::Num(v)) => Ok(Expr::Num(v)),
            Some(Tok::Ident(s)) => Ok(Expr::Path(vec![s])),
            Some(Tok::Punct("(")) => {
                let e = self.expr()?;
                self.expect(")")?;
                Ok(e)
            }
            Some(Tok::Punct("{")) => {
                let mut items = Vec::new();
                while !self.eat("}") {
                    items.push(self.expr()?);
                    if !self.eat(",") {
                        self.expect("}")?;
                        break;
                    }
                }
                Ok(Expr::List(items))
            }
            t => err(self.line(), format!("expected an expression, found {t:?}")),
        }
    }
}

fn precedence(op: &str) -> Option<u8> {
    Some(match op {
        "||" => 1,
        "&&" => 2,
        "==" | "!=" => 3,
        "<" | ">" | "<=" | ">=" => 4,
        "|" => 5,
        "^" => 6,
        "&" => 7,
        "<<" | ">>" => 8,
        "++" => 9,
        "+" | "-" | "|+|" | "|-|" => 10,
        "*" | "/" | "%" => 11,
        _ => return None,
    })
}

/// The value of a constant expression, if it is one.
pub fn const_value(e: &Expr, consts: &BTreeMap<String, u128>) -> Option<u128> {
    match e {
        Expr::Num(v) => Some(*v),
        Expr::Path(p) if p.len() == 1 => consts.get(&p[0]).copied(),
        Expr::Cast(_, e) => const_value(e, consts),
        _ => None,
    }
}

/// Parses `text` (already preprocessed).
pub fn parse(text: &str) -> Result<Program, ParseError> {
    let toks = lex(text)?;
    Parser { toks, pos: 0 }.program()
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn preprocessor_picks_the_target_branch() {
        let t = "a\n#if __TARGET_TOFINO__ == 2\nb\n#else\nc\n#endif\n#if __TARGET_TOFINO__ != 1\nd\n#endif\n";
        assert_eq!(preprocess(t, 1).expect("t1"), "a\n\n\n\nc\n\n\n\n\n");
        assert_eq!(preprocess(t, 2).expect("t2"), "a\n\nb\n\n\n\n\nd\n\n");
        assert!(preprocess("#if FOO\n#endif\n", 1).is_err());
        assert!(preprocess("#if __TARGET_TOFINO__ == 1\n", 1).is_err());
    }

    #[test]
    fn expressions_parse_with_precedence_casts_and_shifts() {
        let p = parse(
            "control C(inout m_t meta) { apply { meta.a = ((bit<32>)meta.q << 1) + meta.t >> 2; meta.b = r.execute(meta.s[15:0]); } }",
        )
        .expect("parses");
        let c = &p.controls["C"];
        let Stmt::Assign { rhs, .. } = &c.apply[0] else {
            panic!("assign")
        };
        // `+` binds tighter than `>>`.
        let Expr::Bin(">>", l, _) = rhs else {
            panic!("{rhs:?}")
        };
        assert!(matches!(**l, Expr::Bin("+", _, _)));
        let Stmt::Assign { rhs, .. } = &c.apply[1] else {
            panic!("assign")
        };
        assert!(matches!(rhs, Expr::Call(..)));
        assert!(parse("control C() { apply { x; } }").is_err());
    }
}
