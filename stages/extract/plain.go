package extract

import (
	"path"
	"strings"
)

// Plain-text formats read as text, as they are: markups whose markup is
// light enough to search through, source code and configuration.
var (
	// MarkupExts are plain-text document markups.
	MarkupExts = []string{".rst", ".rest", ".adoc", ".asciidoc", ".org", ".tex", ".latex", ".bib", ".textile",
		".markdown", ".mdown", ".mkd", ".mdx", ".text", ".pod", ".rdoc", ".wiki", ".mediawiki"}
	// CodeExts are source code (--add-exts code).
	CodeExts = []string{".go", ".py", ".pyi", ".js", ".mjs", ".cjs", ".ts", ".tsx", ".jsx", ".java", ".kt", ".kts",
		".scala", ".groovy", ".gradle", ".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".hxx", ".cs", ".fs",
		".rs", ".rb", ".php", ".pl", ".pm", ".sh", ".bash", ".zsh", ".fish", ".ps1", ".bat", ".cmd", ".lua", ".r",
		".swift", ".m", ".mm", ".sql", ".hs", ".ml", ".mli", ".ex", ".exs", ".erl", ".hrl", ".clj", ".cljs",
		".dart", ".vue", ".svelte", ".css", ".scss", ".sass", ".less", ".proto", ".graphql", ".tf", ".cmake",
		".mk", ".vim", ".el", ".lisp", ".scm", ".jl", ".nim", ".zig", ".f90", ".f", ".pas", ".awk", ".sed",
		".asm", ".s", ".v", ".vhd", ".sv", ".d", ".cu", ".ipynb"}
	// ConfigExts are configuration and data files (--add-exts config).
	ConfigExts = []string{".json", ".jsonl", ".yaml", ".yml", ".toml", ".ini", ".cfg", ".conf", ".xml", ".xsd",
		".properties", ".plist", ".service", ".desktop", ".log", ".diff", ".patch", ".srt", ".vtt"}
)

// docNames are the base names (before any extension, any case) of the
// files projects keep their documentation in without a usual extension:
// README, LICENSE, Makefile, a Debian copyright. With an extension that
// has no reader ("README.Debian") they are still read as text.
var docNames = map[string]bool{
	"readme": true, "license": true, "licence": true, "copying": true, "copyright": true, "changelog": true,
	"changes": true, "news": true, "authors": true, "install": true, "contributing": true, "todo": true,
	"notice": true, "history": true, "thanks": true, "bugs": true, "faq": true, "makefile": true,
	"dockerfile": true, "containerfile": true, "vagrantfile": true, "gemfile": true, "rakefile": true,
	"procfile": true, "jenkinsfile": true, "credits": true, "maintainers": true, "hacking": true,
	"security": true, "support": true, "code_of_conduct": true, "roadmap": true, "usage": true,
}

func init() {
	for _, list := range [][]string{MarkupExts, CodeExts, ConfigExts} {
		for _, e := range list {
			readers[e] = readText
		}
	}
	readers[""] = readText
	readers[".xhtml"] = readHTML
}

// TextExt is the extension a file is read by: its own, or "" (text) for
// a documentation file ("README.Debian", see docNames) whose extension has
// no reader. ext is the lower-case extension of name, with its dot.
func TextExt(name, ext string) string {
	if ext == "" || Supported(ext) {
		return ext
	}
	base := strings.ToLower(strings.TrimSuffix(path.Base(name), path.Ext(name)))
	base, _, _ = strings.Cut(base, ".")
	if docNames[base] && !strings.HasSuffix(ext, "gz") && ext != ".zip" && ext != ".bz2" && ext != ".xz" {
		return ""
	}
	return ext
}

// LooksLikeText reports whether the first bytes of a file (a few KB) are
// text in some encoding, as the text reader would decide.
func LooksLikeText(b []byte) bool {
	if len(b) == 0 {
		return true
	}
	if enc, _ := bomEncoding(b); enc != nil {
		return true
	}
	return sniffUTF16(b) != nil || !looksBinary(b)
}
