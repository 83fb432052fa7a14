//! `#[derive(PassOptions)]`: one struct gives a pass's option list (for
//! `--list-passes` and the pipeline parser) and its typed values; an option
//! name is written once, so a misspelt read cannot silently yield 0.

use ge_ir::pass::{OptKind, PassInfo, PassOptions};

#[derive(ge_ir::PassOptions, Debug, PartialEq)]
struct DemoOptions {
    /// how many rounds
    #[option("max-iterations", default = 10)]
    max_iterations: i64,
    /// an offset below zero
    #[option("shift", default = -3)]
    shift: i64,
    /// walk top-down
    #[option("top-down", default = true)]
    top_down: bool,
    /// a flag that is off
    #[option("verbose")]
    verbose: bool,
    /// where to write
    #[option("file", default = "-")]
    file: String,
    /// patterns to run
    #[option("enable")]
    enable: Vec<String>,
    /// the strategy
    #[option("mode", default = "fast", one_of = ["fast", "slow"])]
    mode: String,
}

static INFO: PassInfo = PassInfo {
    name: "demo",
    summary: "demo",
    description: "",
    anchor: None,
    options: DemoOptions::DEFS,
};

fn parse(given: &[(&str, &str)]) -> Result<DemoOptions, String> {
    let given: Vec<(String, Option<String>)> = given
        .iter()
        .map(|(k, v)| (k.to_string(), Some(v.to_string())))
        .collect();
    PassOptions::parse(&INFO, &given).map(|o| DemoOptions::from_options(&o))
}

#[test]
fn the_struct_gives_the_option_list() {
    let defs: Vec<(&str, OptKind, &str, &str)> = DemoOptions::DEFS
        .iter()
        .map(|d| (d.name, d.kind, d.default, d.doc))
        .collect();
    assert_eq!(
        defs,
        [
            ("max-iterations", OptKind::Int, "10", "how many rounds"),
            ("shift", OptKind::Int, "-3", "an offset below zero"),
            ("top-down", OptKind::Bool, "true", "walk top-down"),
            ("verbose", OptKind::Bool, "false", "a flag that is off"),
            ("file", OptKind::Str, "-", "where to write"),
            ("enable", OptKind::List, "", "patterns to run"),
            (
                "mode",
                OptKind::Enum(&["fast", "slow"]),
                "fast",
                "the strategy"
            ),
        ]
    );
}

#[test]
fn values_are_typed_with_defaults_filled_in() {
    assert_eq!(
        parse(&[]).unwrap(),
        DemoOptions {
            max_iterations: 10,
            shift: -3,
            top_down: true,
            verbose: false,
            file: "-".into(),
            enable: vec![],
            mode: "fast".into(),
        }
    );
    let o = parse(&[
        ("max-iterations", "3"),
        ("verbose", "true"),
        ("enable", "a,b"),
        ("mode", "slow"),
    ])
    .unwrap();
    assert_eq!(o.max_iterations, 3);
    assert!(o.verbose);
    assert_eq!(o.enable, ["a", "b"]);
    assert_eq!(o.mode, "slow");
    // Unknown names and bad values are errors, not zeros.
    assert!(parse(&[("max-iteration", "3")])
        .unwrap_err()
        .contains("no such option 'max-iteration'"));
    assert!(parse(&[("mode", "medium")]).is_err());
    assert!(parse(&[("shift", "x")]).is_err());
}
