//! The config file: any text is read into a usable config or refused with
//! a problem to show, never a panic.
use dashfloat::config::{Cli, Config};

/// The file's text.
pub fn run(data: &[u8]) {
    let text = String::from_utf8_lossy(data).into_owned();
    let cli = Cli::default();
    let env = |name: &str| (name == "HOME").then(|| "/home/fuzz".to_owned());
    let (config, problems) = Config::resolve(&cli, env, Some(Ok(text)), "config.toml");
    // Whatever the file said, the result names a URL and a model.
    assert!(
        config.base_url.starts_with("http"),
        "{config:?} {problems:?}"
    );
    assert!(!config.model.is_empty());
}
