#!/usr/bin/env python3
"""Writes the same three-page English document as HTML (LibreOffice), groff -ms
and LaTeX, plus sentences.txt ("page<TAB>sentence") that the Go tests look for.
Run by make.sh; the outputs are committed."""
import html

PAGES = [
    {
        "heading": "Field Notes on River Restoration",
        "paras": [
            "This report describes how a small team restored the banks of a slow river over three dry summers.",
            "The work began with a careful survey of the old channel, the fallen willows and the gravel bars that had formed after the flood.",
            "Every volunteer kept a notebook, and the notes were copied into one shared document at the end of each week.",
        ],
        "list": [
            "Remove the concrete blocks that narrowed the channel near the bridge.",
            "Plant native reeds along the eastern bank where the soil was washed away.",
            "Measure the water temperature every morning before the sun reached the pools.",
        ],
        "ordered": False,
        "after": [
            "The list above was agreed at the first meeting and did not change during the project.",
        ],
    },
    {
        "heading": "Measurements from the Upper Valley",
        "paras": [
            "The measurements were taken at four stations between the café near the old mill and the weir below the village.",
            "A naïve estimate based on rainfall alone would have predicted much higher flows in the second summer.",
            "The hydrologist from Zürich reviewed the résumé of each station and corrected two mislabelled readings.",
        ],
        "table": [
            ["Station", "Depth", "Temperature"],
            ["Mill", "0.8", "14.2"],
            ["Bridge", "1.1", "15.0"],
            ["Weir", "1.6", "13.7"],
        ],
        "after": [
            "Students from São Paulo joined the team in August and repeated the depth readings with a second instrument.",
            "Their results matched the earlier readings within a few centimetres at every station.",
        ],
    },
    {
        "heading": "Conclusions and Next Steps",
        "paras": [
            "The restored bank held through the autumn storms without any further loss of soil.",
            "Trout were seen again in the deep pool below the bridge for the first time in twelve years.",
        ],
        "list": [
            "Repeat the survey of the channel every spring.",
            "Train new volunteers to read the instruments.",
            "Publish the notebooks so that other valleys can learn from them.",
        ],
        "ordered": True,
        "after": [
            "The team thanks the landowners who allowed access to the river throughout the project.",
        ],
    },
]


def sentences():
    for n, p in enumerate(PAGES, 1):
        yield n, p["heading"]
        for s in p["paras"] + p.get("list", []) + p["after"]:
            yield n, s


def write_html():
    out = ['<!DOCTYPE html>', '<html><head><meta charset="utf-8"><title>River Restoration</title></head><body>']
    for i, p in enumerate(PAGES):
        style = ' style="page-break-before: always"' if i else ""
        out.append(f'<h1{style}>{html.escape(p["heading"])}</h1>')
        for s in p["paras"]:
            out.append(f"<p>{html.escape(s)}</p>")
        if "list" in p:
            tag = "ol" if p["ordered"] else "ul"
            out.append(f"<{tag}>" + "".join(f"<li>{html.escape(s)}</li>" for s in p["list"]) + f"</{tag}>")
        if "table" in p:
            rows = ["<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in p["table"]]
            out.append('<table border="1">' + "".join(rows) + "</table>")
        for s in p["after"]:
            out.append(f"<p>{html.escape(s)}</p>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def write_ms():
    out = ['.\\" groff -ms source; .nh and HY 0 turn hyphenation off', ".nh", ".nr HY 0"]
    for i, p in enumerate(PAGES):
        if i:
            out.append(".bp")
        out += [".NH", p["heading"], ".PP"]
        out.append(" ".join(p["paras"]))
        if "list" in p:
            for k, s in enumerate(p["list"], 1):
                out += [f".IP {k}." if p["ordered"] else ".IP \\(bu", s]
        if "table" in p:
            out += [".TS", "box;", "l l l."]
            out += ["\t".join(r) for r in p["table"]]
            out.append(".TE")
        out += [".PP", " ".join(p["after"])]
    return "\n".join(out) + "\n"


def tex_escape(s):
    return s.replace("&", "\\&").replace("%", "\\%")


def write_tex():
    out = [
        "\\documentclass{article}",
        "\\usepackage[utf8]{inputenc}",
        "\\usepackage[T1]{fontenc}",
        "\\usepackage{lmodern}",
        "% No hyphenation: the tests look for whole words.",
        "\\hyphenpenalty=10000 \\exhyphenpenalty=10000 \\sloppy",
        "\\begin{document}",
    ]
    for i, p in enumerate(PAGES):
        if i:
            out.append("\\newpage")
        out.append(f"\\section*{{{tex_escape(p['heading'])}}}")
        out.append(tex_escape(" ".join(p["paras"])))
        out.append("")
        if "list" in p:
            env = "enumerate" if p["ordered"] else "itemize"
            out.append(f"\\begin{{{env}}}")
            out += [f"\\item {tex_escape(s)}" for s in p["list"]]
            out.append(f"\\end{{{env}}}")
        if "table" in p:
            out.append("\\begin{tabular}{|l|l|l|}\\hline")
            out += [" & ".join(r) + " \\\\ \\hline" for r in p["table"]]
            out.append("\\end{tabular}")
            out.append("")
        out.append(tex_escape(" ".join(p["after"])))
        out.append("")
    out.append("\\end{document}")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    with open("river.html", "w", encoding="utf-8") as f:
        f.write(write_html())
    with open("river.ms", "w", encoding="utf-8") as f:
        f.write(write_ms())
    with open("river.tex", "w", encoding="utf-8") as f:
        f.write(write_tex())
    with open("sentences.txt", "w", encoding="utf-8") as f:
        for n, s in sentences():
            f.write(f"{n}\t{s}\n")
