//! The panic hook: a panic on a thread other than the UI's, while the UI
//! holds the screen, must not touch the terminal; its report is kept for
//! after the restore.

use dashfloat::ui::terminal::{ScreenClaim, install_panic_hook, take_kept_panics};

use dashfloat::bounds::PANICS_KEPT;

#[test]
fn a_panic_off_the_ui_thread_is_kept_while_the_screen_is_held() {
    install_panic_hook();
    let claim = ScreenClaim::claim();
    let worker = std::thread::Builder::new()
        .name("worker".into())
        .spawn(|| panic!("worker broke on 1e20"))
        .unwrap();
    assert!(worker.join().is_err());
    let (kept, more) = take_kept_panics();
    assert_eq!(more, 0);
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert!(kept[0].contains("thread 'worker'"), "{kept:?}");
    assert!(kept[0].contains("worker broke on 1e20"), "{kept:?}");
    // A flood of panics keeps the first few and counts the rest.
    for _ in 0..PANICS_KEPT + 2 {
        assert!(std::thread::spawn(|| panic!("again")).join().is_err());
    }
    let (kept, more) = take_kept_panics();
    assert_eq!((kept.len(), more), (PANICS_KEPT, 2));
    drop(claim);
    // With no UI holding the screen, a panic goes to the previous hook.
    assert!(std::thread::spawn(|| panic!("later")).join().is_err());
    assert_eq!(take_kept_panics(), (Vec::new(), 0));
}
