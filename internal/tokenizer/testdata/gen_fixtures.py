#!/usr/bin/env python3
# Writes fixtures.jsonl: {"text": ..., "ids": [...]} as produced by Hugging
# Face `tokenizers` for all-MiniLM-L6-v2, truncated to 256 ids including
# [CLS]/[SEP] (sentence-transformers' max_seq_length), without padding.
#
# Regenerate (from internal/tokenizer/testdata):
#   pip install tokenizers==0.23.3
#   python3 gen_fixtures.py ~/.cache/micro-rag-mcp/models/all-MiniLM-L6-v2/tokenizer.json
#   python3 gen_fixtures.py ~/.cache/micro-rag-mcp/models/bge-small-zh-v1.5-int8/tokenizer.json fixtures-zh.jsonl
# (the second: bge-small-zh's cased vocabulary, from `make models`).
# The output is deterministic: random strings come from a fixed seed.
import json
import random
import sys

from tokenizers import Tokenizer

tok = Tokenizer.from_file(sys.argv[1])
tok.no_padding()
tok.enable_truncation(max_length=256)

texts = [
    "", " ", "   \t\n  ", "\n", "\r\n", "\u00a0", "\u3000", "\u2028\u2029",
    "Hello, world!", "hello world", "HELLO WORLD", "Hello   world", "Hello\tworld\nagain\r\nand again",
    "The quick brown fox jumps over the lazy dog.",
    "It's a truth universally acknowledged, that a single man in possession of a good fortune, must be in want of a wife.",
    "Don't stop—believing… “quoted” ‘single’ «guillemets» „low‟",
    "Semantic search finds passages by meaning rather than by keywords.",
    "FAISS IndexFlatIP over L2-normalised vectors gives cosine similarity.",
    "e.g. i.e. etc. Mr. Mrs. Dr. St. U.S.A. a.m. p.m.",
    "state-of-the-art, well-known, self-contained, mother-in-law",
    "unbelievable unaffordable antidisestablishmentarianism pneumonoultramicroscopicsilicovolcanoconiosis",
    "The embeddings are 384-dimensional; the batch size is 64.",
    "Tokenization of ___underscores___ and ---dashes--- and ...dots...",
    # numbers
    "3.14159 2.71828 1,000,000 1e-9 0x1F 0b1010 42nd 1st 2nd 3rd",
    "Call +1 (555) 123-4567 or 555.123.4567 ext. 89",
    "12:30pm 2024-01-15T10:00:00Z 15/01/2024 $19.99 €20,00 £5 ¥100 ₹500",
    "100% 50‰ ±3 ×2 ÷4 ≤5 ≥6 ≠7 ≈8 ∞ √2 ∑ ∏ ∫",
    # URLs, e-mail, paths
    "https://example.com/path/to/page?query=1&b=two#frag",
    "Visit http://www.example.org:8080/index.html or ftp://files.example.net/pub/",
    "mailto:someone@example.com, first.last+tag@sub.example.co.uk",
    "/usr/local/bin/micro-rag-mcp --data-folder ~/docs --title Notes",
    "C:\\Users\\Public\\Documents\\report_final(2).docx",
    # code
    "func (t *Tokenizer) Encode(dst []int32, text string, maxLen int) []int32 {",
    "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hi\")\n}\n",
    "for i := 0; i < len(xs); i++ { if xs[i] != nil { return xs[i].Err() } }",
    "def fib(n):\n    return n if n < 2 else fib(n-1) + fib(n-2)\n",
    "class Foo(Bar):\n    def __init__(self, *args, **kwargs):\n        super().__init__(*args, **kwargs)",
    "import numpy as np; x = np.zeros((3, 4), dtype=np.float32)",
    '{"id":12345,"path":"a/b.md","mtime":1739650000.123,"deleted":false,"tags":["x","y"]}',
    '[{"k": null}, {"k": true}, {"k": -1.5e+10}]',
    "#!/bin/sh\nset -eu\nfor f in *.txt; do echo \"$f\" | tr a-z A-Z >> out.log 2>&1; done",
    "grep -rn 'TODO' . | awk -F: '{print $1}' | sort -u | xargs -I{} wc -l {}",
    "SELECT id, name FROM users WHERE age >= 18 AND name LIKE '%smith%';",
    "<div class=\"x\"><a href='/y'>link</a></div><!-- comment -->",
    "a&&b||c!d^e~f`g@h#i$j%k&l*m(n)o_p+q=r{s}t[u]v|w\\x:y;z\"'<,>.?/",
    "x := map[string][]int{\"a\": {1, 2}}; y, ok := x[\"b\"]",
    "camelCaseIdentifier snake_case_identifier SCREAMING_CASE kebab-case PascalCase",
    "<|endoftext|> <s> </s> <pad> ## ##ing [[double]] [CLSX] [cls] [ CLS ]",
    # special tokens in text
    "[CLS]", "[SEP]", "[UNK]", "[MASK]", "[PAD]",
    "a[CLS]b[SEP]c", "[CLS] hello [SEP] world [MASK] [UNK] [PAD]", "[[CLS]]", "[CLS][SEP][MASK]",
    "[MASK]ed language modelling", "x [SE P] [Sep] [MASK", "[UNK]nown",
    # accents and Latin
    "café naïve Ångström Đorđe øre łódź résumé coöperate", "CAFÉ NAÏVE ÅNGSTRÖM", "Crème brûlée à la française",
    "Đ đ Ø ø Ł ł Æ æ Œ œ Þ þ Ð ð ŀ Ŀ ı ĸ ŉ ſ", "São Paulo, Bogotá, Zürich, Kraków, Reykjavík, Dubrovnik",
    "Straße STRASSE ß ẞ groß Fuß", "Ⅻ ⅻ Ⅰ ⅰ ℃ ℉ Ω Å K", "ǅ ǈ ǋ ǲ Ǆ ǆ", "İstanbul İ ı I i", "TÜRKİYE İzmir Iğdır",
    "ΣΊΣΥΦΟΣ σίσυφος ΟΔΥΣΣΕΥΣ Ὀδυσσεύς", "ς σ Σ ΣΑΣ", "Ἀριστοτέλης ᾅδης ῼ ᾳ",
    "ﬁle ﬂow ﬀ ﬃ ﬄ ﬅ ﬆ", "Ｆｕｌｌｗｉｄｔｈ　ＡＢＣ　１２３！？", "ｈｅｌｌｏ，ｗｏｒｌｄ．",
    "e\u0301 a\u0300 o\u0308 n\u0303 c\u0327", "E\u0301COLE", "a\u0323\u0302 q\u0307\u0323", "z\u0335\u0336\u0337",
    "Z\u0351\u036b\u0343\u036a\u0302\u036b\u033d\u034f\u0334\u0319\u0324\u031e\u0349\u035a\u032f\u031e\u0320\u034dalgo",
    "\u0301leading combining", "trailing combining\u0301", "\u0301", "a\u20dd b\u20e3",
    "Việt Nam Tiếng Việt Hà Nội Thành phố Hồ Chí Minh", "Ærøskøbing Ålesund Tromsø",
    "Čeština Šťastný Žluťoučký kůň úpěl ďábelské ódy", "Português: ação, coração, pão", "Română: ș ț ş ţ",
    "Esperanto: ĉ ĝ ĥ ĵ ŝ ŭ", "Lietuvių ąčęėįšųūž", "Magyar: árvíztűrő tükörfúrógép",
    # CJK and East Asia
    "中文分词测试", "我爱北京天安门。", "漢字かな交じり文", "日本語のテキストです。", "東京タワーは333メートルです",
    "ひらがな カタカナ ｶﾀｶﾅ", "ｱｲｳｴｵ ﾞﾟ", "한국어 텍스트", "안녕하세요, 세계!", "대한민국 서울특별시",
    "ㄱㄴㄷ ㅏㅑㅓ", "混合English和中文text", "𠀀𠀁𪜀𫝀𫠠𬺰 𰀀", "豈 更 車 賈 滑 串 句 龜", "﨎 﨏 﨑 﨓 﨔", "丽 丸 乁 𠄢",
    "㐀㐁㐂 䶵 鿿 〇 々 〆", "中\u0301文", "，。、；：？！「」『』（）【】",
    # other scripts
    "مرحبا بالعالم", "السَّلَامُ عَلَيْكُمْ", "العربية: ١٢٣٤٥", "שלום עולם", "עִבְרִית", "สวัสดีครับ ภาษาไทย",
    "नमस्ते दुनिया", "हिन्दी भाषा", "বাংলা ভাষা", "தமிழ் மொழி", "ქართული ენა", "Հայերեն լեզու",
    "Русский язык: Привет, мир! Ёлка ёжик", "Українська: Ґґ Єє Її", "Ελληνικά: Γειά σου Κόσμε", "ᚠᚢᚦᚨᚱᚲ ᚷᚹ",
    "ሰላም ዓለም", "ꯃꯩꯇꯩ ꯂꯣꯟ", "ᠮᠣᠩᠭᠣᠯ", "ܐܪܡܝܐ", "ދިވެހި", "ᏣᎳᎩ", "ⴰⵎⴰⵣⵉⵖ",
    # emoji
    "I ❤ NY 😀 😃 😄 😁", "👍🏽 👋🏿 🙏", "👨‍👩‍👧‍👦 family", "🏳️‍🌈 flag", "👩🏽‍💻 coder", "🇺🇸🇬🇧🇯🇵", "1️⃣ #️⃣",
    "emoji🙂inside🙂words", "✅ ❌ ⚠️ ✨ ★ ☆ ♥ ♪", "🥰 🦄 🧠 🫠 🪐", "text\u200dwith\u200czero\u200bwidth\ufeffchars",
    # whitespace, control characters
    "a\u00a0b\u3000c\u2028d\u2029e\tf\rg\nh", "a\u2000b\u2001c\u2002d\u2003e\u2009f\u200ag\u202fh\u205fi\u1680j",
    "a\u0085b\u000bc\u000cd", "nul\x00byte", "\x00\x00\x00", "bell\x07 esc\x1b[31mred\x1b[0m", "del\x7fchar",
    "replacement\ufffdchar", "\ufffd", "\ufffd\ufffd x \ufffd", "a\u200eb\u200fc\u202ad\u202ce", "soft\u00adhyphen",
    "private\ue000use\U000f0000", "tag\U000e0041chars", "noncharacter\ufdd0\uffff", "unassigned\u0378\u0888x",
    "\u180e mongolian vowel separator", "line1\u2028line2\u2029para",
    # very long words
    "a" * 100, "a" * 101, "b" * 150, "x" * 99 + " " + "y" * 101, "é" * 100, "é" * 101, "ab" * 60,
    "supercalifragilisticexpialidocious" * 3, "https://example.com/" + "abcdefghij" * 12,
    "中" * 120, "😀" * 101, "a\u0301" * 101, "[CLS]" * 60, "-" * 300, "!?" * 200,
    # combining-mark ordering kept by the reference
    "a\U0001D16D\U0001D165", "a\u0301\U0001D16D\U0001D165", "a\U0001D16D\u0e31\U0001D165", "x\u302f\u302e\u1b44y",
    "a\u0898\u0899", "a\U0001D16D\u0301\U0001D165 b", "\U0001D165\U0001D16D", "\u3042\u302e\u0301\u1b44",
]

passage = (
    "Retrieval-augmented generation pairs a language model with a search index. "
    "Documents are split into overlapping chunks of about a thousand characters, "
    "each chunk is embedded into a 384-dimensional vector, and the vectors are stored "
    "in a flat inner-product index. At query time the question is embedded the same way "
    "and the nearest chunks are returned with their scores, paths and offsets. "
)
texts += [
    passage * 3, passage * 10, (passage + "\n\n") * 25, "word " * 300, "word " * 253, "word " * 254,
    "word " * 255, "a " * 254, "a " * 255, "a " * 256, "a,b " * 200, "中" * 300, "é " * 400,
    " ".join(["token"] * 253) + " [SEP]", "x " * 253 + "y" * 120, "z " * 252 + "unbelievable",
    ("Der schnelle braune Fuchs springt über den faulen Hund. " * 20),
    ("日本語の文章は長くなると切り詰められます。" * 30),
    ("func main() { fmt.Println(\"hello\") }\n" * 40),
]

# Seeded random strings over a pool that mixes every class of character the
# normaliser and pre-tokenizer treat differently.
rng = random.Random(20240601)
pool = (
    list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
    + list(" \t\n\r.,;:!?'\"()[]{}<>-_/\\|@#$%^&*+=~`")
    + list("éèêëÉÈàâäÅåçñøØłŁđĐßẞİıΣσςΩ")
    + ["\u0301", "\u0308", "\u0327", "\u0e31", "\U0001D165", "\U0001D16D", "\u302e", "\u1b44", "\u0898"]
    + list("中文字漢日本語ひらがなカタカナ한국어") + ["\uf900", "\U0002F800"]
    + list("مرحباשלוםสวัสดีनमस्ते")
    + ["\u00a0", "\u3000", "\u2028", "\u200b", "\u200d", "\ufeff", "\x00", "\x07", "\x1b", "\ufffd", "\ue000"]
    + ["😀", "👍", "🏽", "❤", "️", "ﬁ", "Ａ", "１", "…", "—", "“", "”", "«", "»", "·", "¿", "¡", "§", "¶"]
    + ["[CLS]", "[SEP]", "[UNK]", "[MASK]", "[PAD]", "##", "ing", "tion", "un", "the "]
)
for _ in range(200):
    n = rng.randint(1, 60)
    texts.append("".join(rng.choice(pool) for _ in range(n)))

words = passage.split() + ["naïve", "café", "中文", "🙂", "[SEP]", "x\u0301y", "İ", "Σ"]
for _ in range(40):
    n = rng.randint(50, 400)
    texts.append(" ".join(rng.choice(words) for _ in range(n)))

seen = set()
with open(sys.argv[2] if len(sys.argv) > 2 else "fixtures.jsonl", "w", encoding="utf-8") as f:
    for t in texts:
        if t in seen:
            continue
        seen.add(t)
        ids = tok.encode(t).ids
        f.write(json.dumps({"text": t, "ids": ids}, ensure_ascii=True) + "\n")
print(len(seen), "fixtures", file=sys.stderr)
