//! The `reconbound` command line: see `reconbound --help` and `reconbound::cli`.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let out = reconbound::cli::run(&args);
    print!("{}", out.stdout);
    eprint!("{}", out.stderr);
    std::process::exit(out.code);
}
