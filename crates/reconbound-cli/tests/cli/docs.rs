//! Issue 43: the README a newcomer reads first, and the guides under `docs/` it points to.
//! The README stays short (at most 200 lines) and links every guide, every relative link in
//! the README and the guides resolves (file and heading), and every `reconbound` command line
//! in the README's code blocks runs and exits 0 — none skipped.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::common::{repo_root, temp_dir};

/// The README's text.
pub(crate) fn readme() -> String {
    std::fs::read_to_string(repo_root().join("README.md")).unwrap()
}

/// The text of the guide `docs/NAME`.
pub(crate) fn guide(name: &str) -> String {
    let path = repo_root().join("docs").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every `docs/*.md`, sorted by name.
fn guide_paths() -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(repo_root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    paths.sort();
    paths
}

/// The README followed by every guide under `docs/`: the text a user can read, wherever a
/// passage of it lives.
pub(crate) fn readme_and_guides() -> String {
    let mut text = readme();
    for path in guide_paths() {
        text.push('\n');
        text.push_str(&std::fs::read_to_string(path).unwrap());
    }
    text
}

/// A fenced code block: its info string (`sh`, `bash`, …) and its lines.
struct Block {
    lang: String,
    lines: Vec<String>,
}

fn code_blocks(text: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut open: Option<Block> = None;
    for line in text.lines() {
        if let Some(info) = line.strip_prefix("```") {
            match open.take() {
                Some(b) => blocks.push(b),
                None => {
                    open = Some(Block {
                        lang: info.trim().to_string(),
                        lines: Vec::new(),
                    })
                }
            }
        } else if let Some(b) = open.as_mut() {
            b.lines.push(line.to_string());
        }
    }
    assert!(open.is_none(), "an unclosed code block");
    blocks
}

/// `text` without its fenced code blocks and inline code spans: the prose, where links are.
fn prose(text: &str) -> String {
    let mut out = String::new();
    let mut fence = false;
    for line in text.lines() {
        if line.starts_with("```") {
            fence = !fence;
            continue;
        }
        if !fence {
            out.push_str(line);
            out.push('\n');
        }
    }
    let mut no_code = String::new();
    for (i, part) in out.split('`').enumerate() {
        if i % 2 == 0 {
            no_code.push_str(part);
        }
    }
    no_code
}

/// The targets of the inline links `[text](target)` of `text`'s prose.
fn link_targets(text: &str) -> Vec<String> {
    let prose = prose(text);
    let mut targets = Vec::new();
    let mut rest = prose.as_str();
    while let Some(i) = rest.find("](") {
        rest = &rest[i + 2..];
        let end = rest.find(')').expect("a link without its ')'");
        targets.push(rest[..end].to_string());
        rest = &rest[end..];
    }
    targets
}

/// GitHub's anchor for a heading: lower case, punctuation dropped, spaces made hyphens.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of `text`'s headings.
fn anchors(text: &str) -> Vec<String> {
    let mut fence = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.starts_with("```") {
            fence = !fence;
        } else if !fence && line.starts_with('#') {
            out.push(slug(line.trim_start_matches('#')));
        }
    }
    out
}

/// Every link of `file` (a Markdown file of the repository) that is not a web address: its
/// file exists, and its `#anchor`, if any, is a heading of that file.
fn assert_links_resolve(file: &Path) {
    let text = std::fs::read_to_string(file).unwrap();
    let dir = file.parent().unwrap();
    for target in link_targets(&text) {
        if target.starts_with("http://")
            || target.starts_with("https://")
            || target.starts_with("mailto:")
        {
            continue;
        }
        let (path, anchor) = match target.split_once('#') {
            Some((p, a)) => (p, Some(a)),
            None => (target.as_str(), None),
        };
        let resolved = if path.is_empty() {
            file.to_path_buf()
        } else {
            dir.join(path)
        };
        assert!(
            resolved.exists(),
            "{}: the link '{target}' names {}, which does not exist",
            file.display(),
            resolved.display()
        );
        if let Some(anchor) = anchor {
            let linked = std::fs::read_to_string(&resolved).unwrap();
            assert!(
                anchors(&linked).iter().any(|a| a == anchor),
                "{}: the link '{target}': {} has no heading with anchor '#{anchor}'",
                file.display(),
                resolved.display()
            );
        }
    }
}

#[test]
fn readme_is_at_most_200_lines_and_links_every_guide() {
    let readme = readme();
    let lines = readme.lines().count();
    assert!(lines <= 200, "README.md has {lines} lines (at most 200)");
    let targets = link_targets(&readme);
    for path in guide_paths() {
        let name = format!("docs/{}", path.file_name().unwrap().to_string_lossy());
        assert!(
            targets
                .iter()
                .any(|t| t == &name || t.starts_with(&format!("{name}#"))),
            "README.md does not link {name}"
        );
    }
    // the set-up's test command is the one CI runs
    let ci = std::fs::read_to_string(repo_root().join(".ci/run")).unwrap();
    assert!(ci.lines().any(|l| l.trim() == "cargo test"), ".ci/run");
    let setup = code_blocks(&readme)
        .into_iter()
        .find(|b| b.lines.iter().any(|l| l.starts_with("cargo test")))
        .expect("a set-up block with cargo test");
    assert!(
        setup
            .lines
            .iter()
            .any(|l| l.starts_with("cargo run --release -- report ")),
        "the set-up block runs the report"
    );
}

#[test]
fn every_relative_link_in_the_readme_and_the_guides_resolves() {
    let readme = repo_root().join("README.md");
    assert!(
        link_targets(&std::fs::read_to_string(&readme).unwrap())
            .iter()
            .any(|t| t.starts_with("docs/")),
        "README.md links no guide"
    );
    assert_links_resolve(&readme);
    for path in guide_paths() {
        assert_links_resolve(&path);
    }
}

#[test]
fn link_checks_catch_a_missing_file_and_a_missing_heading() {
    assert_eq!(
        slug(" Scaling out: shards, Slurm and Kubernetes"),
        "scaling-out-shards-slurm-and-kubernetes"
    );
    assert_eq!(
        slug(" A fresh clone's two commands"),
        "a-fresh-clones-two-commands"
    );
    assert_eq!(
        slug(" What it shows (MNIST, seed 1, R = 100, 2 threads)"),
        "what-it-shows-mnist-seed-1-r--100-2-threads"
    );
    let dir = temp_dir("docs", "links");
    std::fs::write(dir.join("b.md"), "# B\n\n## The part\n").unwrap();
    for (text, ok) in [
        ("see [b](b.md#the-part) and `[not](a link)`\n", true),
        ("see [b](missing.md)\n", false),
        ("see [b](b.md#no-such-part)\n", false),
        ("```\n[not](checked.md)\n```\n", true),
    ] {
        std::fs::write(dir.join("a.md"), text).unwrap();
        let caught = std::panic::catch_unwind(|| assert_links_resolve(&dir.join("a.md")));
        assert_eq!(caught.is_ok(), ok, "{text}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The shell command a README line stands for, if it is a `reconbound` command line:
/// `cargo run --release -- ARGS` is `reconbound ARGS`, the binary under test.
fn as_reconbound_command(line: &str) -> Option<String> {
    if let Some(args) = line.strip_prefix("cargo run --release -- ") {
        Some(format!("reconbound {args}"))
    } else if line.starts_with("reconbound ") {
        Some(line.to_string())
    } else {
        None
    }
}

/// `lines` with `\`-continued lines joined.
fn logical_lines(lines: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for line in lines {
        match line.strip_suffix('\\') {
            Some(head) => {
                cur.push_str(head);
                cur.push(' ');
            }
            None => {
                cur.push_str(line);
                out.push(std::mem::take(&mut cur).trim().to_string());
            }
        }
    }
    assert!(cur.is_empty(), "a code block ends in a continuation line");
    out
}

/// A directory holding `reconbound` (the binary under test), to put first on PATH.
fn bin_dir(dir: &Path) -> String {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_reconbound"), bin.join("reconbound")).unwrap();
    let path = std::env::var("PATH").unwrap_or_default();
    format!("{}:{path}", bin.display())
}

fn assert_success(what: &str, out: std::process::Output) {
    assert!(
        out.status.success(),
        "README: `{what}` exited {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Every `reconbound` command line of the README's code blocks, run as a user runs it (by
/// `sh`, in a fresh directory, one block's lines in order so that a later line reads what an
/// earlier one wrote), exits 0. `cargo test` is the only other line a shell block may hold
/// (the test suite itself). The Slurm batch script (a block starting with `#!`) is run as
/// array tasks 0 and 1 of 2 with Slurm's variables, and its shards merge.
///
/// The README's main job — its first command, the default `report`, the longest test of the
/// suite (about 40 s of CPU) — runs in [`the_readmes_main_job_runs_and_exits_0`], beside this
/// test rather than after it (issue 44).
#[test]
fn every_reconbound_command_in_the_readme_runs_and_exits_0() {
    let ran = run_readme_commands(false);
    for needle in [
        "reconbound report ",
        "reconbound bound ",
        "reconbound check ",
    ] {
        assert!(
            ran.iter().any(|c| c.starts_with(needle)),
            "no '{needle}…' among the README's commands: {ran:?}"
        );
    }
}

/// The README's main job (the default `report`), run as [`every_reconbound_command_in_the_readme_runs_and_exits_0`]
/// runs the others.
#[test]
fn the_readmes_main_job_runs_and_exits_0() {
    let ran = run_readme_commands(true);
    assert_eq!(ran.len(), 1, "{ran:?}");
}

/// Whether a README command line is its main job: the default `report`.
fn is_main_job(command: &str) -> bool {
    command.split('#').next().unwrap_or_default().trim() == "reconbound report"
}

/// Run the README's `reconbound` command lines (the main job alone with `main_job`, else all
/// but it) and return those run.
fn run_readme_commands(main_job: bool) -> Vec<String> {
    let dir = temp_dir(
        "docs",
        if main_job {
            "readme-main-job"
        } else {
            "readme-commands"
        },
    );
    let path = bin_dir(&dir);
    let mut ran = Vec::new();
    let mut ran_elsewhere = Vec::new();
    for (k, block) in code_blocks(&readme()).into_iter().enumerate() {
        let work = dir.join(format!("block-{k}"));
        std::fs::create_dir_all(&work).unwrap();
        let lines = logical_lines(&block.lines);
        let shell = matches!(block.lang.as_str(), "sh" | "bash" | "shell" | "console");
        if lines.first().is_some_and(|l| l.starts_with("#!")) {
            if main_job {
                continue;
            }
            assert!(shell, "a script in a '{}' block", block.lang);
            let commands: Vec<&String> = lines
                .iter()
                .filter(|l| l.starts_with("reconbound "))
                .collect();
            assert!(
                !commands.is_empty(),
                "a script without a reconbound command"
            );
            let script = work.join("script.sh");
            std::fs::write(&script, block.lines.join("\n") + "\n").unwrap();
            let args = ["attack", "prior-aware", "--trials", "4", "--quiet"];
            for task in 0..2 {
                let out = Command::new("bash")
                    .arg(&script)
                    .args(args)
                    .current_dir(&work)
                    .env("PATH", &path)
                    .env("SLURM_ARRAY_TASK_ID", task.to_string())
                    .env("SLURM_ARRAY_TASK_COUNT", "2")
                    .output()
                    .unwrap();
                assert_success(&format!("{} (task {task} of 2)", commands[0]), out);
            }
            let out = Command::new("sh")
                .args(["-c", "reconbound merge shard-0.jsonl shard-1.jsonl --json"])
                .current_dir(&work)
                .env("PATH", &path)
                .output()
                .unwrap();
            assert_success("reconbound merge of the script's shards", out);
            ran.extend(commands.into_iter().cloned());
            continue;
        }
        for line in &lines {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            match as_reconbound_command(line) {
                Some(command) if is_main_job(&command) != main_job => {
                    ran_elsewhere.push(command);
                }
                Some(command) => {
                    assert!(shell, "a command line in a '{}' block: {line}", block.lang);
                    let out = Command::new("sh")
                        .args(["-c", &command])
                        .current_dir(&work)
                        .env("PATH", &path)
                        .output()
                        .unwrap();
                    assert_success(line, out);
                    ran.push(command);
                }
                None if shell => assert!(
                    line.split('#').next().unwrap().trim() == "cargo test",
                    "README: a shell line this test cannot run: {line}"
                ),
                None => {}
            }
        }
    }
    // the main job is in the README, and exactly once: the other test runs it
    let main_jobs = if main_job { &ran } else { &ran_elsewhere };
    assert_eq!(
        main_jobs.iter().filter(|c| is_main_job(c)).count(),
        1,
        "the README's main job 'cargo run --release -- report': {main_jobs:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
    ran
}
