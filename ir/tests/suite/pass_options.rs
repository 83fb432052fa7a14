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

/// Options several passes share, flattened into each.
#[derive(ge_ir::PassOptions, Debug, PartialEq)]
struct SharedOptions {
    /// how many rounds
    #[option("rounds", default = 2)]
    rounds: i64,
    /// walk top-down
    #[option("top-down", default = true)]
    top_down: bool,
}

#[derive(ge_ir::PassOptions, Debug, PartialEq)]
struct WithShared {
    /// before the shared ones
    #[option("first")]
    first: Vec<String>,
    #[option(flatten)]
    shared: SharedOptions,
    /// after them
    #[option("last", default = "z")]
    last: String,
}

static WITH_SHARED: PassInfo = PassInfo {
    name: "with-shared",
    summary: "demo",
    description: "",
    anchor: None,
    options: WithShared::DEFS,
};

#[test]
fn flattened_options_join_the_list_where_declared() {
    let names: Vec<&str> = WithShared::DEFS.iter().map(|d| d.name).collect();
    assert_eq!(names, ["first", "rounds", "top-down", "last"]);
    let given = [
        ("rounds".to_string(), Some("5".to_string())),
        ("first".to_string(), Some("a".to_string())),
    ];
    let o = PassOptions::parse(&WITH_SHARED, &given).unwrap();
    assert_eq!(
        WithShared::from_options(&o),
        WithShared {
            first: vec!["a".into()],
            shared: SharedOptions {
                rounds: 5,
                top_down: true
            },
            last: "z".into(),
        }
    );
    let err = PassOptions::parse(&WITH_SHARED, &[("round".into(), Some("1".into()))]).unwrap_err();
    assert!(
        err.contains("no such option 'round' for pass 'with-shared' (options: first, rounds, top-down, last)"),
        "{err}"
    );
}

/// Lint: options are read by name only in the code `#[derive(PassOptions)]`
/// generates. A pass that called `o.derived_int("max-iteration")` by hand
/// would be back to a misspelt name reading as 0 (tried once: such a call
/// planted in rewrites/src/passes/canonicalize.rs was reported).
#[test]
fn no_hand_written_option_reads() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let allowed = [
        root.join("ir/src/pass/options.rs"),
        root.join("ir/tests/suite/pass_options.rs"),
    ];
    let reads = ["bool", "int", "str", "list"].map(|t| format!(".derived_{t}("));
    let mut hits = vec![];
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().to_string();
            if p.is_dir() {
                if !["target", ".git", ".venv", "macros", "lit-tests", "testdata"]
                    .contains(&name.as_str())
                {
                    stack.push(p);
                }
            } else if name.ends_with(".rs") && !allowed.contains(&p) {
                let text = std::fs::read_to_string(&p).unwrap_or_default();
                for (i, line) in text.lines().enumerate() {
                    if reads.iter().any(|r| line.contains(r.as_str())) {
                        hits.push(format!("{}:{}", p.display(), i + 1));
                    }
                }
            }
        }
    }
    assert!(hits.is_empty(), "options read by name: {hits:?}");
}
