#!/usr/bin/env python3
"""Generates the non-PDF hostile corpus for stages/extract (run from this
directory; deterministic, so re-running changes nothing). Files made at test
time instead: a name with a newline, a 1 MB single line, a 50 MB text file,
and a DOCX whose zip header lies about its size."""
import io
import random
import zipfile

RU = ("Поисковый сервер хранит индекс рядом с документами. Каждый файл "
      "читается, делится на фрагменты и превращается в векторы. Когда "
      "пользователь задаёт вопрос, сервер находит самые близкие фрагменты и "
      "возвращает их вместе с оценкой сходства.\n\nСтарые кодировки, такие "
      "как windows-1251, всё ещё встречаются в архивах бухгалтерии и в "
      "письмах десятилетней давности. Москва, Казань и Новосибирск.\n")
FR = ("Le serveur de recherche fonctionne entièrement hors ligne. Les "
      "fichiers déjà indexés ne sont relus que si leur date de modification "
      "ou leur somme de contrôle a changé.\n\nOù qu'ils soient rangés, les "
      "documents restent sur la machine : aucune donnée n'est envoyée à "
      "l'extérieur. Voilà pourquoi l'outil convient aux dossiers privés, "
      "même très volumineux, à Besançon comme à Noël.\n")
DE = ("Die Suchmaschine läuft vollständig lokal. Größere Ordner werden "
      "schrittweise eingelesen, und geänderte Dateien werden anhand ihrer "
      "Prüfsumme erkannt.\n\nÜbrigens bleibt jeder Absatz auffindbar, auch "
      "wenn die Datei in einer älteren Kodierung gespeichert wurde. Schöne "
      "Grüße aus München, sagt der Bäckermeister.\n")
JA = ("この検索サーバーは、フォルダーの中の文書を読み込み、意味の近い段落を探します。"
      "古い日本語のファイルは、シフトJISで保存されていることがよくあります。"
      "文字コードを正しく判定できれば、文字化けせずに索引に登録できます。\n\n"
      "東京の事務所で作られた報告書も、大阪の支店の議事録も、同じように検索できます。"
      "会議の記録や手順書など、長い文章でも問題ありません。\n")
EN = ("Plain English saved by an old Windows tool as UTF-16. Every second "
      "byte of this text is zero, which gives the encoding away.\r\n"
      "Second line, with CRLF endings as that tool wrote them.\r\n")


def write(name, data):
    with open(name, "wb") as f:
        f.write(data)


def docx(name, parts, level=9):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=level) as z:
        for part, body in parts:
            info = zipfile.ZipInfo(part, date_time=(2024, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, body)
    write(name, buf.getvalue())


CT = ('<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.'
      'openxmlformats.org/package/2006/content-types"><Default Extension="xml" '
      'ContentType="application/xml"/></Types>')


def rels(target):
    return ('<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://'
            'schemas.openxmlformats.org/package/2006/relationships"><Relationship '
            'Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
            'relationships/officeDocument" Target="%s"/></Relationships>' % target)


W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
DOC = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document %s>'
       '<w:body><w:p><w:r><w:t>First paragraph of a small document.</w:t></w:r>'
       '</w:p><w:p><w:r><w:t>Second paragraph, after it.</w:t></w:r></w:p>'
       '</w:body></w:document>' % W)


def bomb(name, spaces, level=9):
    """A document.xml that inflates to `spaces` bytes of blanks inside w:t."""
    with zipfile.ZipFile(name, "w", zipfile.ZIP_DEFLATED, compresslevel=level) as z:
        for part, body in [("[Content_Types].xml", CT), ("_rels/.rels", rels("word/document.xml"))]:
            z.writestr(zipfile.ZipInfo(part, date_time=(2024, 1, 1, 0, 0, 0)), body)
        info = zipfile.ZipInfo("word/document.xml", date_time=(2024, 1, 1, 0, 0, 0))
        info.compress_type = zipfile.ZIP_DEFLATED
        with z.open(info, "w", force_zip64=True) as f:
            f.write(('<w:document %s><w:body><w:p><w:r><w:t>' % W).encode())
            block = b" " * (1 << 20)
            for _ in range(spaces >> 20):
                f.write(block)
            f.write(b"</w:t></w:r></w:p></w:body></w:document>")


def main():
    write("random-bytes.txt", random.Random(20240601).randbytes(64 << 10))
    write("utf16le-bom.txt", b"\xff\xfe" + (EN + FR).encode("utf-16-le"))
    write("utf16le-nobom.txt", EN.encode("utf-16-le"))
    write("utf16le-nobom-russian.txt", RU.encode("utf-16-le"))
    write("utf16be-bom.txt", b"\xfe\xff" + (EN + DE).encode("utf-16-be"))
    write("utf32le-bom.txt", b"\xff\xfe\x00\x00" + DE.encode("utf-32-le"))
    write("windows-1251-russian.txt", RU.encode("cp1251"))
    write("latin1-french.txt", FR.encode("latin-1"))
    write("latin1-german.md", DE.encode("latin-1"))
    write("shift_jis-japanese.txt", JA.encode("shift_jis"))
    write("utf8-one-bad-byte.txt", FR.encode("utf-8").replace(b"hors", b"h\xf6rs"))
    write("empty.txt", b"")
    write("file with spaces.txt", b"A file whose name has spaces in it.\n")
    write("résumé 東京.md", "# Résumé\n\nA Markdown file with a non-ASCII name, written in Tōkyō.\n".encode())
    write("nul-and-cr.txt", b"Old Mac line ends\rand a stray NUL\x00 byte.\r")
    write("cp1251-meta.html", ('<html><head><meta charset="windows-1251"><title>Кодировка</title>'
                               '</head><body><p>%s</p></body></html>' % RU).encode("cp1251"))
    write("latin1-semicolon.csv", "Stadt;Einwohner;Bundesland\nMünchen;1512491;Bayern\n"
          "Köln;1084831;Nordrhein-Westfalen\n".encode("latin-1"))
    docx("docx-no-document.docx", [("[Content_Types].xml", CT), ("_rels/.rels", rels("word/document.xml")),
                                   ("word/styles.xml", "<styles/>")])
    docx("docx-renamed-part.docx", [("[Content_Types].xml", CT), ("_rels/.rels", rels("/word/main.xml")),
                                    ("word/main.xml", DOC)])
    docx("docx-valid.docx", [("[Content_Types].xml", CT), ("_rels/.rels", rels("word/document.xml")),
                             ("word/document.xml", DOC)])
    with open("docx-valid.docx", "rb") as f:
        whole = f.read()
    write("docx-truncated.docx", whole[: len(whole) // 2])
    write("docx-really-text.docx", b"This is a plain text file that someone renamed to .docx.\n")
    # 1 GB of blanks: about 1 MB on disk, refused by its declared size.
    bomb("docx-bomb-1gb.docx", 1 << 30)
    # 48 MB of blanks: under the size cap, refused for its ratio.
    bomb("docx-bomb-ratio.docx", 48 << 20)


if __name__ == "__main__":
    main()
