//! `--phase Q,S,T` (repeatable) and `--schedule FILE.csv`: the schedule of phases of
//! `epsilon`, `bound`, `rero` and `calibrate` (see [`reconbound::accounting::schedule`]).

use super::args::{repeated, value, Flags, Spec, UsageError};
use super::failure::shown;
use super::format::{sig, Side};
use super::json::{Object, Value};
use reconbound::accounting::pld_schedule;
use reconbound::accounting::schedule::{Phase, Schedule, ScheduleError};
use std::format;
use std::string::String;
use std::vec::Vec;

/// `--phase Q,S,T`, repeatable.
pub(crate) const PHASE: Spec = repeated("phase");
/// `--schedule FILE.csv`.
pub(crate) const SCHEDULE: Spec = value("schedule");

/// The help paragraph shared by the commands that take a schedule.
pub(crate) const HELP: &str = "\
Schedules: instead of one (q, σ, T), give phases with --phase Q,S,T (repeated, in order) or
--schedule FILE.csv (lines sampling_rate,noise_multiplier,steps; an optional header line of
those names; blank lines and lines starting with # ignored); at most 1e7 steps in all.
Phases compose by RDP (curves add) and by PLD (certified heterogeneous composition); adjacent
phases with equal (q, σ) are merged, so one phase gives the plain command's numbers bit for
bit. RDP and PLD compose equal (q, σ) wherever they are as one phase (composition commutes);
the PLD in memory independent of the number of phases, and at most 64 distinct (q, σ): a
schedule with more is refused (exit 2) unless only RDP is used (epsilon --accountant rdp,
calibrate --target-epsilon). JSON then has phases: [{sampling_rate, noise_multiplier, steps}] and steps (the total)
instead of sampling_rate and noise_multiplier.
";

/// The one line on schedules of a short `--help` (issue 43); [`HELP`] is in `--help-all`.
pub(crate) const SHORT_HELP: &str = "\
Schedules: --phase Q,S,T (repeated, in order) or --schedule FILE.csv instead of one (q, σ, T).
";

fn one_line(s: &str) -> String {
    let mut out: String = s.chars().filter(|c| !c.is_control()).take(64).collect();
    if s.chars().count() > 64 {
        out.push('…');
    }
    out
}

/// The schedule of `--phase`/`--schedule`, if either is given. `single` are the flags of
/// the one-phase form (they exclude a schedule).
///
/// # Errors
/// Both forms, or a schedule with a one-phase flag; a malformed `--phase` value or CSV line
/// (the line named); a bad phase (its index named); an empty schedule; more than 1e7 steps;
/// an unreadable file; more than [`pld_schedule::MAX_DISTINCT_PHASES`] distinct (q, σ) when
/// the command uses the PLD.
pub(crate) fn from_flags(f: &Flags, single: &[&str]) -> Result<Option<Schedule>, UsageError> {
    let phases = f.all("phase");
    let file = f.raw("schedule");
    let which = match (phases.is_empty(), file) {
        (true, None) => return Ok(None),
        (false, Some(_)) => {
            return Err(UsageError(String::from(
                "flags '--phase' and '--schedule' exclude each other",
            )))
        }
        (false, None) => "phase",
        (true, Some(_)) => "schedule",
    };
    if let Some(other) = single.iter().find(|n| f.has(n)) {
        return Err(UsageError(format!(
            "flags '--{which}' and '--{other}' exclude each other (a schedule gives q, σ and T per phase)"
        )));
    }
    let schedule = read(file, &phases)?;
    if let Some(s) = &schedule {
        check_distinct(f, which, s)?;
    }
    Ok(schedule)
}

/// Whether the command of `f` composes its schedule by PLD: every schedule command but
/// `epsilon --accountant rdp` and `calibrate --target-epsilon`.
fn uses_pld(f: &Flags) -> bool {
    !(f.raw("accountant") == Some("rdp") || f.has("target-epsilon"))
}

/// Refuses, when the command uses the PLD, a schedule of more than
/// [`pld_schedule::MAX_DISTINCT_PHASES`] distinct (q, σ), naming the flag that gave it.
///
/// # Errors
/// The flag, the count and the limit.
fn check_distinct(f: &Flags, which: &str, s: &Schedule) -> Result<(), UsageError> {
    let n = s.distinct_phases();
    if uses_pld(f) && n > pld_schedule::MAX_DISTINCT_PHASES {
        return Err(UsageError(format!(
            "flag '--{which}': {n} distinct (q, σ) phases is out of range: PLD accounting composes at most {} (equal (q, σ) anywhere in the schedule count once); use --accountant rdp with 'epsilon', or fewer distinct phases",
            pld_schedule::MAX_DISTINCT_PHASES
        )));
    }
    Ok(())
}

/// The schedule of `--phase` (`phases`) or `--schedule` (`file`).
fn read(file: Option<&str>, phases: &[&str]) -> Result<Option<Schedule>, UsageError> {
    match file {
        None => {
            let mut list = Vec::with_capacity(phases.len());
            for (i, v) in phases.iter().enumerate() {
                let p = Phase::parse(v).map_err(|what| {
                    UsageError(format!(
                        "flag '--phase' #{}: '{}': {what}",
                        i + 1,
                        one_line(v)
                    ))
                })?;
                list.push(p);
            }
            Schedule::new(&list)
                .map_err(|e| match e {
                    ScheduleError::Phase { index, error, .. } => {
                        UsageError(format!("flag '--phase' #{index}: {error}"))
                    }
                    other => UsageError(format!("flag '--phase': {other}")),
                })
                .map(Some)
        }
        Some(path) => {
            let text =
                super::input::read_text_bounded(path, super::input::SCHEDULE_CAP, "schedule")
                    .map_err(|e| match e {
                        super::failure::Failure::Usage(u) => u,
                        super::failure::Failure::Invalid(e) => {
                            UsageError(super::failure::render_invalid(&e))
                        }
                        super::failure::Failure::Compute(m) => UsageError(m),
                    })?;
            header_order(&text)
                .map_err(|e| UsageError(format!("flag '--schedule' {}: {e}", one_line(path))))?;
            Schedule::parse_csv(&text)
                .map_err(|e| UsageError(format!("flag '--schedule' {}: {e}", one_line(path))))
                .map(Some)
        }
    }
}

/// Refuses a header line whose column names are those of the schedule CSV in another order
/// (`steps,sampling_rate,noise_multiplier`): the columns are read by position, so such a file
/// would be read as data (or fail on a confusing "not a number").
fn header_order(text: &str) -> Result<(), String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some((k, first)) = text
        .lines()
        .enumerate()
        .map(|(k, l)| (k, l.trim()))
        .find(|(_, l)| !l.is_empty() && !l.starts_with('#'))
    else {
        return Ok(());
    };
    let want: Vec<&str> = reconbound::accounting::schedule::CSV_HEADER
        .split(',')
        .collect();
    let mut got: Vec<&str> = first.split(',').map(str::trim).collect();
    if got == want {
        return Ok(());
    }
    got.sort_unstable();
    let mut sorted = want.clone();
    sorted.sort_unstable();
    if got == sorted {
        return Err(format!(
            "line {}: the header '{}' names the columns in another order; a schedule's columns are {} in this order",
            k + 1,
            one_line(first),
            want.join(",")
        ));
    }
    Ok(())
}

/// `phases`: [{sampling_rate, noise_multiplier, steps}] and `steps` (the total).
pub(crate) fn put_phases(o: &mut Object, s: &Schedule) {
    let list = s
        .phases()
        .iter()
        .map(|p| {
            let mut x = Object::new();
            x.num("sampling_rate", p.sampling_rate)
                .num("noise_multiplier", p.noise_multiplier)
                .int("steps", p.steps);
            Value::Obj(x)
        })
        .collect();
    o.put("phases", Value::Arr(list))
        .int("steps", s.total_steps());
}

/// One line per phase, indented; σ shown exactly, or rounded up (`calibrated`: the σ's
/// are results).
pub(crate) fn phases_text(s: &Schedule, calibrated: bool) -> String {
    let mut t = format!(
        "schedule of {} phase(s), {} steps in all:\n",
        s.phases().len(),
        s.total_steps()
    );
    for (i, p) in s.phases().iter().enumerate() {
        t.push_str(&format!(
            "  phase {}: q = {}, σ = {}, T = {}\n",
            i + 1,
            shown(p.sampling_rate),
            if calibrated {
                sig(p.noise_multiplier, 7, Side::Up)
            } else {
                shown(p.noise_multiplier)
            },
            p.steps
        ));
    }
    t
}
