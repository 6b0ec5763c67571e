//! The catalogue of finding ids (crates/detect/src/catalogue.rs) is the one list: the
//! README's tables, docs/json.md's host ids and the lab examples' manifests must agree
//! with it. A failing check prints the text to paste.

use std::path::PathBuf;
use tcpwhy_detect::catalogue;
use tcpwhy_detect::host::HostFindingId;
use tcpwhy_detect::FindingId;

fn repo_file(name: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p:?}: {e}"))
}

#[test]
fn readme_tables_are_the_catalogue() {
    let readme = repo_file("README.md");
    for table in [
        catalogue::markdown_table(),
        catalogue::host_markdown_table(),
    ] {
        assert!(
            readme.contains(&table),
            "README.md's table differs from the catalogue; paste this:\n\n{table}"
        );
    }
}

#[test]
fn json_doc_lists_every_host_id() {
    let doc = repo_file("docs/json.md");
    let ids: Vec<String> = HostFindingId::ALL
        .iter()
        .map(|id| format!("`{}`", id.as_str()))
        .collect();
    let list = ids.join(", ");
    assert!(
        doc.contains(&list),
        "docs/json.md's host finding ids differ from the catalogue; paste this:\n\n{list}"
    );
}

/// Every id a lab example's manifest requires or forbids exists (a typo there would make
/// a must_not check pass for ever).
#[test]
fn lab_manifests_name_only_catalogued_ids() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/lab");
    let mut checked = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path().join("manifest.json");
        let Ok(text) = std::fs::read_to_string(&p) else {
            continue;
        };
        let m: serde_json::Value = serde_json::from_str(&text).unwrap();
        for key in ["must", "must_not"] {
            for id in m[key].as_array().unwrap_or_else(|| panic!("{p:?}: {key}")) {
                let id = id.as_str().unwrap();
                let known = FindingId::parse(id).is_some()
                    || HostFindingId::ALL.iter().any(|h| h.as_str() == id);
                assert!(
                    known,
                    "{p:?}: {key} names {id}, which is not in the catalogue"
                );
                checked += 1;
            }
        }
    }
    // 24 examples; most name several ids.
    assert!(checked >= 24, "only {checked} ids checked");
}
