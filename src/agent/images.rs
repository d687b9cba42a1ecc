//! Images named in a prompt (`what is wrong in @shot.png`, or a
//! screenshot's path pasted into the input box): recognised by their
//! first bytes, bounded in size, read whole and sent as image content
//! with the person's words (ADR 0055).

use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use crate::llm::wire::Image;

/// The most bytes of one image: 3.75 MiB, whose base64 is 5 MiB, the
/// most Anthropic takes of one image (OpenAI takes 20 MB; a screenshot
/// of a 4K screen is 1–3 MiB as PNG). A larger one is left out with a
/// notice. ADR 0055.
pub const IMAGE_MAX_BYTES: u64 = 3_932_160;

/// Images one prompt attaches at most; later ones are left out with a
/// notice: four screenshots are already a large request. ADR 0055.
pub const IMAGES_PER_PROMPT_MAX: usize = 4;

/// The most base64 an open conversation keeps of images: half a saved
/// session's bound (64 MiB), so the words and results always have room
/// and the session is still saved. A prompt's image past it is left out
/// with a notice (`/clear` or a summary lets them go). ADR 0055.
pub(crate) const IMAGES_CONVERSATION_MAX_BYTES: usize = 32 << 20;

/// Prompt tokens an image is estimated to take, whatever its bytes:
/// about what the providers charge for a screenshot they have scaled
/// (Anthropic's most for one image, about 1,600; OpenAI's high detail
/// up to about 1,100). The provider's usage report corrects it.
/// ADR 0055.
const IMAGE_TOKENS: u64 = 1_600;

/// The request bytes an image counts as in the budget's estimates:
/// [`IMAGE_TOKENS`] at the starting 3.5 bytes per token (ADR 0021), the
/// same whatever the calibration says since, so an estimate anchored on
/// a request with the image does not drift. ADR 0055.
pub(crate) const IMAGE_COUNTED_BYTES: usize = IMAGE_TOKENS as usize * 7 / 2;

/// The first bytes read to tell what a file is: WebP's marker ends at
/// the twelfth.
const HEAD_BYTES: u64 = 12;

/// The image formats every wire takes, told by their first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageKind {
    /// `\x89PNG\r\n\x1a\n`.
    Png,
    /// `\xff\xd8\xff`.
    Jpeg,
    /// `GIF87a` or `GIF89a`.
    Gif,
    /// `RIFF`, four bytes of length, `WEBP`.
    Webp,
}

impl ImageKind {
    /// The format `head`, a file's first bytes, opens; `None` when it is
    /// none of them (whatever the file's name says).
    pub fn of(head: &[u8]) -> Option<ImageKind> {
        if head.starts_with(b"\x89PNG\r\n\x1a\n") {
            Some(ImageKind::Png)
        } else if head.starts_with(b"\xff\xd8\xff") {
            Some(ImageKind::Jpeg)
        } else if head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a") {
            Some(ImageKind::Gif)
        } else if head.len() >= 12 && head.starts_with(b"RIFF") && &head[8..12] == b"WEBP" {
            Some(ImageKind::Webp)
        } else {
            None
        }
    }

    /// The media type the wires name it by.
    pub fn media_type(self) -> &'static str {
        match self {
            ImageKind::Png => "image/png",
            ImageKind::Jpeg => "image/jpeg",
            ImageKind::Gif => "image/gif",
            ImageKind::Webp => "image/webp",
        }
    }
}

/// Why an image the prompt names does not go with it; the text is the
/// notice the person reads.
#[derive(Debug, thiserror::Error)]
pub enum LeftOut {
    /// Larger than [`IMAGE_MAX_BYTES`].
    #[error(
        "image {name} ({}) left out: an image goes to the model only up to {}",
        size(*.bytes),
        size(IMAGE_MAX_BYTES)
    )]
    TooLarge {
        /// The name as the prompt gave it.
        name: String,
        /// Its size.
        bytes: u64,
    },
    /// Past [`IMAGES_PER_PROMPT_MAX`] of one prompt.
    #[error("image {name} left out: one prompt takes at most {IMAGES_PER_PROMPT_MAX} images")]
    TooMany {
        /// The name as the prompt gave it.
        name: String,
    },
    /// The model refused images earlier in this run.
    #[error(
        "image {name} left out: the model does not take images (it refused one); /model chooses another"
    )]
    NotTaken {
        /// The name as the prompt gave it.
        name: String,
    },
    /// The conversation holds [`IMAGES_CONVERSATION_MAX_BYTES`] of images.
    #[error(
        "image {name} left out: the conversation holds all the images it keeps ({} of base64); /clear starts afresh",
        size(IMAGES_CONVERSATION_MAX_BYTES as u64)
    )]
    ConversationFull {
        /// The name as the prompt gave it.
        name: String,
    },
    /// It could not be read.
    #[error("image {name} left out: it could not be read: {source}")]
    Unreadable {
        /// The name as the prompt gave it.
        name: String,
        /// What reading it said.
        source: io::Error,
    },
}

/// A file that opens as an image, not read past its first bytes yet: one
/// past the prompt's bound or too large is never read whole.
pub struct Opened {
    name: String,
    kind: ImageKind,
    len: u64,
    head: Vec<u8>,
    rest: Box<dyn Read + Send>,
}

impl std::fmt::Debug for Opened {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Opened")
            .field("name", &self.name)
            .field("kind", &self.kind)
            .field("len", &self.len)
            .finish_non_exhaustive()
    }
}

impl Opened {
    /// `reader`, a regular file of `len` bytes named `name` in the
    /// prompt, when its first bytes are an image's; `None` when they are
    /// not.
    pub fn new(
        mut reader: impl Read + Send + 'static,
        len: u64,
        name: &str,
    ) -> io::Result<Option<Opened>> {
        let mut head = Vec::new();
        reader.by_ref().take(HEAD_BYTES).read_to_end(&mut head)?;
        Ok(ImageKind::of(&head).map(|kind| Opened {
            name: name.to_owned(),
            kind,
            len,
            head,
            rest: Box::new(reader),
        }))
    }

    /// The name the prompt gave it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The image, read whole; left out when it is (or grew) past
    /// [`IMAGE_MAX_BYTES`] or could not be read.
    pub fn read(self) -> Result<Image, LeftOut> {
        let Opened {
            name,
            kind,
            len,
            mut head,
            rest,
        } = self;
        if len > IMAGE_MAX_BYTES {
            return Err(LeftOut::TooLarge { name, bytes: len });
        }
        let room = IMAGE_MAX_BYTES + 1 - head.len() as u64;
        if let Err(source) = rest.take(room).read_to_end(&mut head) {
            return Err(LeftOut::Unreadable { name, source });
        }
        let bytes = head.len() as u64;
        if bytes > IMAGE_MAX_BYTES {
            return Err(LeftOut::TooLarge { name, bytes });
        }
        Ok(Image {
            name,
            media_type: kind.media_type().to_owned(),
            data: STANDARD.encode(&head).into(),
        })
    }
}

/// `image`, when it may join a conversation that holds `held` bytes of
/// images' base64, the model having `refused` images or not; else why it
/// is left out.
pub fn admit(image: Image, held: usize, refused: bool) -> Result<Image, LeftOut> {
    let name = || image.name.clone();
    if refused {
        Err(LeftOut::NotTaken { name: name() })
    } else if held.saturating_add(image.data.len()) > IMAGES_CONVERSATION_MAX_BYTES {
        Err(LeftOut::ConversationFull { name: name() })
    } else {
        Ok(image)
    }
}

/// `path`, outside the project, opened for [`Opened::new`] with its
/// size; an error when it is not a regular file. What it is, is looked
/// at before it is opened, so a device named in a prompt is never opened
/// (opening a tape rewinds it, a watchdog arms); then it is opened
/// without blocking and without becoming the controlling terminal, and
/// looked at again, so a FIFO or device put in its place in between
/// cannot hang the lookup or take the terminal.
pub fn open_outside(path: &Path) -> io::Result<(File, u64)> {
    if !std::fs::metadata(path)?.is_file() {
        return Err(io::Error::other("not a regular file"));
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags((nix::fcntl::OFlag::O_NONBLOCK | nix::fcntl::OFlag::O_NOCTTY).bits())
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::other("not a regular file"));
    }
    Ok((file, meta.len()))
}

/// The bytes of an image's file from its base64 (what the log line
/// shows).
pub fn file_bytes(image: &Image) -> u64 {
    let padding = image.data.bytes().rev().take_while(|b| *b == b'=').count() as u64;
    (image.data.len() as u64 / 4 * 3).saturating_sub(padding)
}

/// `bytes` as the log shows a size: bytes, KiB or MiB.
pub fn size(bytes: u64) -> String {
    if bytes < 1024 {
        format!("{bytes} bytes")
    } else if bytes < 1024 * 1024 {
        format!("{} KiB", bytes.div_ceil(1024))
    } else {
        let mib = format!("{:.2}", bytes as f64 / (1024.0 * 1024.0));
        format!("{} MiB", mib.trim_end_matches('0').trim_end_matches('.'))
    }
}

/// The note that stands for an image left out of the conversation
/// because the model refused images.
pub fn refused_note(image: &Image) -> String {
    let name = if image.name.is_empty() {
        "image"
    } else {
        &image.name
    };
    format!("[image {name} left out: the model does not take images]")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// The first bytes of a real 1×1 PNG.
    const PNG: &[u8] =
        b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89";

    #[test]
    fn a_conversation_keeps_images_up_to_its_bound_and_none_once_refused() {
        let image = |bytes: usize| Image {
            name: "shot.png".to_owned(),
            media_type: "image/png".to_owned(),
            data: "A".repeat(bytes).into(),
        };
        let held = IMAGES_CONVERSATION_MAX_BYTES - 10;
        assert!(admit(image(10), held, false).is_ok());
        assert!(matches!(
            admit(image(11), held, false),
            Err(LeftOut::ConversationFull { .. })
        ));
        assert!(matches!(
            admit(image(1), 0, true),
            Err(LeftOut::NotTaken { .. })
        ));
    }

    #[test]
    fn outside_the_project_only_a_regular_file_is_opened() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("shot.png");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        // Neither is opened: a FIFO would wait for a writer, a device
        // would act on being opened.
        assert!(open_outside(&fifo).is_err());
        assert!(open_outside(Path::new("/dev/null")).is_err());
        assert!(open_outside(dir.path()).is_err());
        let real = dir.path().join("real.png");
        std::fs::write(&real, PNG).unwrap();
        assert_eq!(open_outside(&real).unwrap().1, PNG.len() as u64);
    }

    #[test]
    fn an_image_is_told_by_its_first_bytes_not_its_name() {
        assert_eq!(ImageKind::of(PNG), Some(ImageKind::Png));
        assert_eq!(
            ImageKind::of(b"\xff\xd8\xff\xe0\0\x10JFIF"),
            Some(ImageKind::Jpeg)
        );
        assert_eq!(ImageKind::of(b"GIF89a\x01\0"), Some(ImageKind::Gif));
        assert_eq!(
            ImageKind::of(b"RIFF\x24\0\0\0WEBPVP8 "),
            Some(ImageKind::Webp)
        );
        assert_eq!(ImageKind::of(b"RIFF\x24\0\0\0WAVEfmt "), None);
        assert_eq!(ImageKind::of(b"\x89PNG"), None, "cut short");
        assert_eq!(ImageKind::of(b"not a png at all"), None);
    }

    #[test]
    fn an_image_is_read_whole_as_base64_and_a_larger_one_left_out() {
        let opened = Opened::new(PNG, PNG.len() as u64, "dot.png")
            .unwrap()
            .unwrap();
        let image = opened.read().unwrap();
        assert_eq!(image.media_type, "image/png");
        assert_eq!(image.name, "dot.png");
        assert_eq!(STANDARD.decode(&*image.data).unwrap(), PNG);
        assert_eq!(file_bytes(&image), PNG.len() as u64);
        assert!(
            Opened::new(&b"plain text, not an image"[..], 24, "a.png")
                .unwrap()
                .is_none()
        );

        let mut large = PNG.to_vec();
        large.resize(IMAGE_MAX_BYTES as usize + 1, 0);
        let said = large.len() as u64;
        let grown = Opened::new(std::io::Cursor::new(large.clone()), 10, "big.png").unwrap();
        assert!(matches!(
            grown.unwrap().read(),
            Err(LeftOut::TooLarge { bytes, .. }) if bytes == said
        ));
        let big = Opened::new(std::io::Cursor::new(large), 5 << 20, "big.png").unwrap();
        let why = big.unwrap().read().unwrap_err().to_string();
        assert_eq!(
            why,
            "image big.png (5 MiB) left out: an image goes to the model only up to 3.75 MiB"
        );
    }

    #[test]
    fn sizes_read_as_the_log_shows_them() {
        assert_eq!(size(900), "900 bytes");
        assert_eq!(size(120 * 1024), "120 KiB");
        assert_eq!(size(5 << 20), "5 MiB");
        assert_eq!(size(IMAGE_MAX_BYTES), "3.75 MiB");
        assert_eq!(size(1_300_000), "1.24 MiB");
    }
}
