//! Issue 44: no import circles. The modules of the core (`src/`) and of the command line
//! (`crates/reconbound-cli/src/`) import each other one way only: what two files share lives
//! one floor down, in a module named for what it is. The graph is drawn from the code's own
//! paths (`crate::…`, `super::…`, `self::…`), comments and unit-test modules left out, a path
//! resolved to the deepest module file it names; a child naming its parent is not an edge (a
//! parent declares its children).

use crate::common::repo_root;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

type Graph = BTreeMap<String, BTreeSet<String>>;

/// The source without comment lines and without a trailing `#[cfg(test)] mod tests { … }`.
fn code(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests {") {
        Some(i) => &text[..i],
        None => text,
    };
    text.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every `crate::a::b`, `super::a`, `self::a` path of `text`, as its segments.
fn paths(text: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    for start in ["crate::", "super::", "self::"] {
        for (i, _) in text.match_indices(start) {
            if text[..i].chars().next_back().is_some_and(is_ident) {
                continue;
            }
            let tail = &text[i..];
            let end = tail
                .find(|c: char| !(is_ident(c) || c == ':'))
                .unwrap_or(tail.len());
            let segments: Vec<String> = tail[..end]
                .split("::")
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect();
            // a group, `super::{a, b::c}`: each item is a path of its own (an independent
            // review: the group's items were no edges)
            if tail[..end].ends_with("::") && tail[end..].starts_with('{') {
                let group = &tail[end + 1..];
                let mut depth = 0usize;
                let close = group
                    .char_indices()
                    .find(|&(_, c)| {
                        match c {
                            '{' => depth += 1,
                            '}' if depth == 0 => return true,
                            '}' => depth -= 1,
                            _ => {}
                        }
                        false
                    })
                    .map_or(group.len(), |(i, _)| i);
                let mut depth = 0usize;
                let mut item = String::new();
                for c in group[..close].chars().chain([',']) {
                    match c {
                        '{' => depth += 1,
                        '}' => depth = depth.saturating_sub(1),
                        ',' if depth == 0 => {
                            let first = item
                                .trim()
                                .split("::")
                                .next()
                                .unwrap_or_default()
                                .split_whitespace()
                                .next()
                                .unwrap_or_default()
                                .to_string();
                            if !first.is_empty() && first != "self" && first.chars().all(is_ident) {
                                let mut s = segments.clone();
                                s.push(first);
                                out.push(s);
                            }
                            item.clear();
                            continue;
                        }
                        _ => {}
                    }
                    item.push(c);
                }
            }
            out.push(segments);
        }
    }
    out
}

/// The module graph of the crate whose `src/` is `root` (modules named `a::b`; the root "").
fn graph(root: &Path) -> Graph {
    let mut files = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path.strip_prefix(root).unwrap().with_extension("");
                let mut parts: Vec<String> = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                if parts.last().is_some_and(|p| p == "mod") {
                    parts.pop();
                }
                if parts == ["lib"] || parts == ["main"] {
                    parts.clear();
                }
                files.insert(parts.join("::"), path);
            }
        }
    }
    let mut g = Graph::new();
    for (module, file) in &files {
        let me: Vec<&str> = if module.is_empty() {
            vec![]
        } else {
            module.split("::").collect()
        };
        let text = code(&std::fs::read_to_string(file).unwrap());
        let mut deps = BTreeSet::new();
        for p in paths(&text) {
            let (mut base, mut rest): (Vec<&str>, &[String]) = match p[0].as_str() {
                "crate" => (vec![], &p[1..]),
                "super" => (me[..me.len().saturating_sub(1)].to_vec(), &p[1..]),
                _ => (me.clone(), &p[1..]),
            };
            while rest.first().is_some_and(|s| s == "super") {
                base.pop();
                rest = &rest[1..];
            }
            let mut full: Vec<&str> = base;
            full.extend(rest.iter().map(String::as_str));
            while !full.is_empty() && !files.contains_key(&full.join("::")) {
                full.pop();
            }
            let target = full.join("::");
            if !target.is_empty()
                && target != *module
                && !module.starts_with(&format!("{target}::"))
            {
                deps.insert(target);
            }
        }
        g.insert(module.clone(), deps);
    }
    g
}

/// The strongly connected components of more than one module (Tarjan).
fn circles(g: &Graph) -> Vec<Vec<String>> {
    struct State<'a> {
        g: &'a Graph,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on.insert(v);
        let g = s.g;
        for w in g.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.on.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on.remove(w);
                comp.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                s.out.push(comp);
            }
        }
    }
    let mut s = State {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in g.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out
}

#[test]
fn the_core_and_the_command_line_have_no_import_circles() {
    for (what, dir) in [
        ("core", repo_root().join("src")),
        (
            "command line",
            repo_root().join("crates/reconbound-cli/src"),
        ),
    ] {
        let g = graph(&dir);
        assert!(g.len() > 20, "{what}: {} modules", g.len());
        let found = circles(&g);
        assert!(found.is_empty(), "{what}: import circles {found:?}");
    }
}

/// Negative control: a circle, as the command line had (`audit` ↔ `audit_one_run`), is found;
/// a child naming its parent is not one.
#[test]
fn the_circle_check_finds_a_circle() {
    let dir = crate::common::temp_dir("layers", "circle");
    let src = dir.join("src");
    std::fs::create_dir_all(src.join("audit")).unwrap();
    std::fs::write(src.join("lib.rs"), "mod audit;\nmod one;\n").unwrap();
    std::fs::write(
        src.join("audit/mod.rs"),
        "// super::one in a comment is no edge\nuse crate::one::x;\npub mod child;\n",
    )
    .unwrap();
    std::fs::write(src.join("audit/child.rs"), "use super::y;\n").unwrap();
    std::fs::write(src.join("one.rs"), "use super::audit::z;\n").unwrap();
    let g = graph(&src);
    assert_eq!(circles(&g), vec![vec!["audit", "one"]]);
    // a grouped import is an edge too
    std::fs::write(src.join("one.rs"), "use super::{audit, other};\n").unwrap();
    assert_eq!(circles(&graph(&src)), vec![vec!["audit", "one"]]);
    std::fs::write(src.join("one.rs"), "fn f() {}\n").unwrap();
    assert!(circles(&graph(&src)).is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}
