//! Issue 43: reference text that cannot go stale. The command line itself is the one source —
//! the flags its parser takes (listed by its unknown-flag message) and the keys its `--json`
//! prints (the recorded snapshots of `json_snapshots.rs`) — and the synopsis and the JSON-key
//! table of `docs/reference.md` and every `--help-all` are tested against it.

use crate::common::run_cli as run;
use std::collections::BTreeSet;

/// Each snapshot of `tests/cli/json/` and the command words whose `--help-all` documents it.
const SNAPSHOT_COMMANDS: &[(&str, &[&str])] = &[
    ("attack-glm", &["attack", "glm"]),
    ("attack-gradient-matching", &["attack", "gradient-matching"]),
    ("attack-prior-aware", &["attack", "prior-aware"]),
    ("attack-reconn", &["attack", "reconn"]),
    ("audit-one-run", &["audit"]),
    ("audit", &["audit"]),
    ("bound-fixed", &["bound"]),
    ("bound", &["bound"]),
    ("calibrate-advantage", &["calibrate"]),
    ("calibrate-epsilon", &["calibrate"]),
    ("calibrate-gamma", &["calibrate"]),
    ("epsilon-fixed", &["epsilon", "--sampling", "fixed"]),
    ("epsilon", &["epsilon"]),
    ("estimate-guesses", &["estimate"]),
    ("estimate-scores-gdp-fixed", &["estimate"]),
    ("estimate-scores", &["estimate"]),
    ("fano", &["fano"]),
    ("fil-logreg", &["fil-logreg"]),
    ("merge-audit", &["audit"]),
    ("rdp", &["rdp"]),
    ("report", &["report"]),
    ("rero", &["rero"]),
    ("tradeoff", &["tradeoff"]),
    ("train-logreg", &["train"]),
    ("train", &["train"]),
];

/// Every command (and attack) with flags of its own: the words before the flags.
const COMMANDS: &[&[&str]] = &[
    &["run"],
    &["bound"],
    &["rdp"],
    &["epsilon"],
    &["rero"],
    &["tradeoff"],
    &["fano"],
    &["calibrate"],
    &["check"],
    &["train"],
    &["fil-logreg"],
    &["attack", "glm"],
    &["attack", "gradient-matching"],
    &["attack", "prior-aware"],
    &["attack", "reconn"],
    &["audit"],
    &["estimate"],
    &["merge"],
    &["report"],
    // the commands whose flags a second parser reads (an independent review, issue 44)
    &["report", "--run", "FILE"],
    &["epsilon", "--sampling", "fixed"],
];

/// Every object key of a JSON text, at any depth (the snapshots are the command line's own
/// output: keys are plain `"snake_case":`).
fn json_keys(text: &str) -> BTreeSet<String> {
    let mut keys = BTreeSet::new();
    let mut rest = text;
    while let Some(start) = rest.find('"') {
        let after = &rest[start + 1..];
        let Some(end) = after.find('"') else { break };
        let word = &after[..end];
        let tail = &after[end + 1..];
        if tail.starts_with(':') {
            keys.insert(word.to_string());
        }
        rest = tail;
    }
    keys
}

/// `text` without the values of the objects under `keys` (a report embeds `bound --json`,
/// `audit --json`, … whose keys those commands document).
fn without_embedded(text: &str, keys: &[&str]) -> String {
    let mut out = text.to_string();
    for key in keys {
        let head = format!("\"{key}\": {{");
        let Some(start) = out.find(&head) else {
            continue;
        };
        let open = start + head.len() - 1;
        let mut depth = 0usize;
        let mut end = out.len();
        for (i, c) in out[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        out.replace_range(open..end, "{}");
    }
    out
}

/// The names of `wanted` that `text` does not contain as a whole word (delimited by a
/// character that cannot be part of a key or flag).
fn missing<'a>(wanted: impl IntoIterator<Item = &'a String>, text: &str) -> Vec<String> {
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    wanted
        .into_iter()
        .filter(|w| {
            !text.match_indices(w.as_str()).any(|(i, _)| {
                let before = text[..i].chars().next_back();
                let after = text[i + w.len()..].chars().next();
                !before.is_some_and(is_word) && !after.is_some_and(is_word)
            })
        })
        .cloned()
        .collect()
}

/// The `--help-all` text of `words`.
fn help_all(words: &[&str]) -> String {
    let mut argv = words.to_vec();
    argv.push("--help-all");
    let (code, out, err) = run(&argv);
    assert_eq!(code, 0, "{words:?} --help-all: {err}");
    out
}

/// The flags the parser of `words` takes, from its unknown-flag message.
fn parser_flags(words: &[&str]) -> BTreeSet<String> {
    let mut argv = words.to_vec();
    argv.push("--not-a-flag-zz");
    let (code, _, err) = run(&argv);
    assert_eq!(code, 2, "{words:?}: {err}");
    let list = err
        .split("this command takes: ")
        .nth(1)
        .unwrap_or_else(|| panic!("{words:?}: the unknown-flag message lists no flags: {err}"));
    list.split_whitespace()
        .filter(|f| f.starts_with("--"))
        .map(str::to_string)
        .collect()
}

/// The lines of the synopsis block of `docs/reference.md` for `words` (its first line starts
/// `reconbound <words> `, continuation lines are indented).
fn synopsis(words: &[&str]) -> String {
    let reference = crate::docs::guide("reference.md");
    let block = reference
        .split("## The command line")
        .nth(1)
        .and_then(|s| s.split("```").nth(1))
        .expect("docs/reference.md has a synopsis block");
    let head = format!("reconbound {} ", words.join(" "));
    let mut out = String::new();
    let mut inside = false;
    for line in block.lines() {
        if line.starts_with("reconbound ") {
            let line = line.split_whitespace().collect::<Vec<_>>().join(" ") + " ";
            // `reconbound epsilon --sampling fixed` is `epsilon`'s too; `attack glm` is not
            // `attack gradient-matching`'s
            inside = line.starts_with(&head);
        }
        if inside {
            out.push_str(line);
            out.push('\n');
        }
    }
    // `[RUN FLAGS]` stands for the flags of `reconbound run`, written once
    if out.contains("[RUN FLAGS]") && words != ["run"] {
        out = out.replace("[RUN FLAGS]", &synopsis(&["run"]));
    }
    out
}

/// The rows of the JSON-key table of `docs/reference.md` whose first cell names `words`
/// (empty if none does), with the row "all" (the keys every command prints: `command` and
/// the inputs) after them.
fn key_rows(words: &[&str]) -> String {
    let reference = crate::docs::guide("reference.md");
    let name = words.iter().take(2).copied().collect::<Vec<_>>().join(" ");
    let name = name.split(" --").next().unwrap_or_default().to_string();
    let rows = |own: bool| {
        reference
            .lines()
            .filter(|l| l.starts_with("| "))
            .filter(|l| {
                let first = l.split('|').nth(1).unwrap_or_default();
                if own {
                    first.contains(&format!("`{name}`")) || first.contains(&format!("`{name} "))
                } else {
                    first.trim() == "all"
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    let own = rows(true);
    if own.is_empty() {
        return own;
    }
    own + "\n" + &rows(false)
}

#[test]
fn every_flag_the_parser_takes_is_in_the_synopsis_and_the_full_help() {
    let mut problems = Vec::new();
    for words in COMMANDS {
        let flags = parser_flags(words);
        assert!(flags.len() >= 2, "{words:?}: {flags:?}");
        let syn = synopsis(words);
        let help = help_all(words);
        for f in missing(&flags, &syn) {
            problems.push(format!(
                "{words:?}: {f} not in the synopsis of docs/reference.md"
            ));
        }
        for f in missing(&flags, &help) {
            problems.push(format!("{words:?}: {f} not in --help-all"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn every_json_key_is_in_the_full_help_and_the_reference_table() {
    let dir = crate::common::repo_root().join("crates/reconbound-cli/tests/cli/json");
    let mut problems = Vec::new();
    for (name, words) in SNAPSHOT_COMMANDS {
        let path = dir.join(format!("{name}.json"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
        // the report's embedded results are the other commands' (checked there)
        let text = without_embedded(&text, &["bound", "attack", "audit", "train"]);
        let keys = json_keys(&text);
        assert!(keys.len() >= 3, "{name}: {keys:?}");
        let help = help_all(words);
        let section = help
            .split("\n\n")
            .filter(|p| p.contains("JSON"))
            .collect::<Vec<_>>()
            .join("\n");
        for k in missing(&keys, &section) {
            problems.push(format!(
                "{name}: key {k} not in {words:?} --help-all's JSON keys"
            ));
        }
        let rows = key_rows(words);
        if rows.is_empty() {
            problems.push(format!(
                "docs/reference.md has no JSON-key row for {words:?}"
            ));
            continue;
        }
        for k in missing(&keys, &rows) {
            problems.push(format!(
                "{name}: key {k} not in docs/reference.md's row for {words:?}"
            ));
        }
    }
    // every snapshot is mapped: a new one must say which help documents it
    for entry in std::fs::read_dir(&dir).unwrap() {
        let file = entry.unwrap().file_name().to_string_lossy().into_owned();
        if let Some(stem) = file.strip_suffix(".json") {
            assert!(
                SNAPSHOT_COMMANDS.iter().any(|(n, _)| *n == stem),
                "{file}: add it to SNAPSHOT_COMMANDS"
            );
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Negative controls: the checks above find a key or a flag that is not there, and do not
/// take a longer word for a shorter one.
#[test]
fn the_reference_checks_catch_a_missing_key_or_flag() {
    let keys: BTreeSet<String> = ["epsilon_pld", "gamma"].map(String::from).into();
    assert_eq!(
        missing(&keys, "`epsilon_pld_lower`, `gamma_lower`"),
        vec!["epsilon_pld", "gamma"]
    );
    assert!(missing(&keys, "`epsilon_pld`, `gamma`").is_empty());
    assert_eq!(
        json_keys(r#"{"a": 1, "b": [{"c": "d:"}], "e": "f"}"#),
        ["a", "b", "c", "e"].map(String::from).into()
    );
    // a command without a row of its own has none, the row "all" notwithstanding
    assert!(key_rows(&["no-such-command"]).is_empty());
    assert!(key_rows(&["bound"]).contains("`command`"));
    let flags = parser_flags(&["bound"]);
    assert!(flags.contains("--noise-multiplier") && !flags.contains("--not-a-flag-zz"));
    // a synopsis without a flag the parser takes is caught
    let syn = synopsis(&["bound"]).replace("--diameter", "--dia");
    assert_eq!(
        missing(&flags, &syn)
            .iter()
            .filter(|f| *f == "--diameter")
            .count(),
        1
    );
}
