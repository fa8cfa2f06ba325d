//! The formats kebab reads, each written once: the name `--format` and the
//! index (`sources.format`) give it, what a sentence calls it, and the
//! extensions read as it. Messages that list them are built from this list.

/// A format kebab reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Md,
    Txt,
    Jsonl,
    Html,
    Pdf,
}

impl Format {
    pub const ALL: [Format; 5] = [Format::Md, Format::Txt, Format::Jsonl, Format::Html, Format::Pdf];

    /// How `--format`, the index and messages name it (`md`).
    pub fn name(self) -> &'static str {
        self.spec().0
    }

    /// Its name in a sentence ("read it as Markdown").
    pub fn prose(self) -> &'static str {
        self.spec().1
    }

    /// The extensions (lowercase, no dot) read as it without `--format`.
    pub fn extensions(self) -> &'static [&'static str] {
        self.spec().2
    }

    fn spec(self) -> (&'static str, &'static str, &'static [&'static str]) {
        match self {
            Format::Md => ("md", "Markdown", &["md", "markdown", "mdown", "mkd"]),
            Format::Txt => ("txt", "plain text", &["txt", "text"]),
            Format::Jsonl => ("jsonl", "JSON Lines", &["jsonl", "ndjson"]),
            Format::Html => ("html", "HTML", &["html", "htm", "xhtml"]),
            Format::Pdf => ("pdf", "a PDF", &["pdf"]),
        }
    }

    /// The format a file's extension says, if any (in any case).
    pub fn of_extension(ext: &str) -> Option<Format> {
        let ext = ext.to_ascii_lowercase();
        Format::ALL.into_iter().find(|f| f.extensions().contains(&ext.as_str()))
    }

    /// Every extension read without `--format`: `.md, .markdown, …, .pdf`.
    pub fn extensions_read() -> String {
        Format::ALL.into_iter().flat_map(Format::extensions).map(|e| format!(".{e}")).collect::<Vec<_>>().join(", ")
    }

    /// The names joined by `sep` (`md|txt|jsonl|html|pdf`), leaving `but` out.
    pub fn names(sep: &str, but: Option<Format>) -> String {
        Format::ALL.into_iter().filter(|f| Some(*f) != but).map(Format::name).collect::<Vec<_>>().join(sep)
    }
}

/// How to read files: by extension, or everything as one format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FormatChoice {
    Auto,
    Only(Format),
}

/// `--format auto|md|txt|jsonl|html|pdf`, the names taken from `Format`.
impl clap::ValueEnum for FormatChoice {
    fn value_variants<'a>() -> &'a [Self] {
        const CHOICES: [FormatChoice; Format::ALL.len() + 1] = {
            let mut all = [FormatChoice::Auto; Format::ALL.len() + 1];
            let mut i = 0;
            while i < Format::ALL.len() {
                all[i + 1] = FormatChoice::Only(Format::ALL[i]);
                i += 1;
            }
            all
        };
        &CHOICES
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(match self {
            FormatChoice::Auto => "auto",
            FormatChoice::Only(format) => format.name(),
        }))
    }
}
