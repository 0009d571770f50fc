//! The README's "Write a Python extension" shows the files of a crate; `examples/python-extension/`
//! is that crate, built and tested by the test command (scripts/python.sh). Its files and the
//! README's copies must not drift apart: the same files, the same text, but for the one line a
//! crate outside this repository cannot have, the path of the `dlspan` dependency.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

const SECTION: &str = "## Write a Python extension";
const CRATE: &str = "examples/python-extension";
/// The part of the repository's `dlspan` line that the README's copy leaves out.
const PATH_KEY: &str = r#"path = "../../runtime", "#;
/// The `dlspan` line of the README's `Cargo.toml`: the crates.io form.
const CRATES_IO_LINE: &str = r#"dlspan = { version = "0.1", features = ["python"] }"#;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The README section's files: each fenced block whose caption, the line before it (blank lines
/// aside), is a path in backticks followed by a colon ("`src/lib.rs`:").
fn readme_files(readme: &str) -> BTreeMap<String, String> {
    let start = readme.find(SECTION).expect("the README has a \"Write a Python extension\" section");
    let section = &readme[start + SECTION.len()..];
    let section = &section[..section.find("\n## ").unwrap_or(section.len())];
    let mut files = BTreeMap::new();
    let mut caption: Option<String> = None;
    let mut lines = section.lines();
    while let Some(line) = lines.next() {
        if line.starts_with("```") {
            let body: Vec<&str> = lines.by_ref().take_while(|l| *l != "```").collect();
            if let Some(path) = caption.take() {
                let previous = files.insert(path.clone(), body.join("\n") + "\n");
                assert!(previous.is_none(), "the README shows {path} twice");
            }
        } else if !line.trim().is_empty() {
            caption = line.strip_prefix('`').and_then(|l| l.strip_suffix("`:")).map(str::to_owned);
        }
    }
    files
}

/// Every file of the crate, by path relative to it (build outputs and hidden files aside).
fn crate_files(dir: &Path, prefix: &str, out: &mut BTreeMap<String, String>) {
    for entry in fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().into_string().unwrap();
        if name.starts_with('.') || name == "target" || name == "__pycache__" {
            continue;
        }
        let path = format!("{prefix}{name}");
        if entry.file_type().unwrap().is_dir() {
            crate_files(&entry.path(), &format!("{path}/"), out);
        } else {
            out.insert(path, fs::read_to_string(entry.path()).unwrap());
        }
    }
}

#[test]
fn the_readme_shows_every_file_of_the_example_extension_as_it_is() {
    let readme = readme_files(&fs::read_to_string(root().join("README.md")).unwrap());
    let mut files = BTreeMap::new();
    crate_files(&root().join(CRATE), "", &mut files);
    assert_eq!(
        readme.keys().collect::<Vec<_>>(),
        files.keys().collect::<Vec<_>>(),
        "the README's files and those of {CRATE}"
    );
    for (path, text) in &files {
        let expected = if path == "Cargo.toml" { text.replacen(PATH_KEY, "", 1) } else { text.clone() };
        assert_eq!(readme[path], expected, "the README's {path} differs from {CRATE}/{path}");
    }
}

#[test]
fn the_readme_takes_dlspan_from_crates_io_and_the_repository_by_path() {
    let readme = readme_files(&fs::read_to_string(root().join("README.md")).unwrap());
    let manifest = fs::read_to_string(root().join(CRATE).join("Cargo.toml")).unwrap();
    let ours: Vec<&str> = manifest.lines().filter(|l| l.starts_with("dlspan =")).collect();
    assert_eq!(ours.len(), 1, "one dlspan dependency in {CRATE}/Cargo.toml");
    assert!(ours[0].contains(PATH_KEY), "the repository's copy builds this checkout's dlspan: {}", ours[0]);
    assert!(ours[0].contains(r#"version = "0.1""#), "with the README's version requirement: {}", ours[0]);
    let theirs: Vec<&str> = readme["Cargo.toml"].lines().filter(|l| l.starts_with("dlspan =")).collect();
    assert_eq!(theirs, [CRATES_IO_LINE]);
    // Nothing else may name a path: the README's crate builds anywhere.
    assert!(!readme.values().any(|text| text.contains("path =")), "the README's files name no path");
}

/// The README's "A native PyTorch operator", "Differentiable kernels" and "JAX kernels in Rust"
/// show excerpts of `examples/torch-native/src/lib.rs` and `examples/jax-ffi/src/lib.rs` (built
/// and tested by the test command) and of `register_module`'s doctest: each of its Rust blocks is
/// in one of them as it is.
#[test]
fn the_readme_native_operator_excerpts_are_the_examples_text() {
    const NATIVE: &str = "## A native PyTorch operator";
    let readme = fs::read_to_string(root().join("README.md")).expect("the README");
    let source = fs::read_to_string(root().join("examples/torch-native/src/lib.rs")).expect("the example");
    // The PyO3 module's excerpt is `register_module`'s doctest (compiled with the crate's docs).
    let doctest: String = fs::read_to_string(root().join("runtime/src/torch/python.rs"))
        .expect("torch/python.rs")
        .lines()
        .filter_map(|line| line.trim_start().strip_prefix("///").map(|l| l.strip_prefix(' ').unwrap_or(l)))
        .collect::<Vec<_>>()
        .join("\n");
    let jax = fs::read_to_string(root().join("examples/jax-ffi/src/lib.rs")).expect("the JAX example");
    for (heading, least) in [(NATIVE, 2), ("## Differentiable kernels", 1), ("## JAX kernels in Rust", 2)] {
        let start = readme.find(heading).unwrap_or_else(|| panic!("the README has a \"{heading}\" section"));
        let section = &readme[start + heading.len()..];
        let section = &section[..section.find("\n## ").unwrap_or(section.len())];
        let mut blocks = 0;
        let mut lines = section.lines();
        while let Some(line) = lines.next() {
            // `rust,ignore`: excerpts, not whole programs (the README's doctests skip them).
            if line == "```rust,ignore" {
                let body: Vec<&str> = lines.by_ref().take_while(|l| *l != "```").collect();
                let body = body.join("\n");
                assert!(
                    source.contains(&body) || doctest.contains(&body) || jax.contains(&body),
                    "the README's block is in none of examples/torch-native/src/lib.rs, examples/jax-ffi/src/lib.rs and register_module's doctest:\n{body}"
                );
                blocks += 1;
            }
        }
        assert!(blocks >= least, "the section {heading} shows the example's kernels");
    }
}
