//! The UI task: screen state, pure update and view, and the terminal loop.

pub mod editor;
pub mod markdown;
pub mod theme;
pub mod wrap;
