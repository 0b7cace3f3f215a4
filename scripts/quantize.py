#!/usr/bin/env python3
"""Quantises the fp32 all-MiniLM-L6-v2 ONNX file to int8 (docs/int8.md).

Run by scripts/quantize.sh, which installs the pinned onnxruntime and onnx
into a venv under the cache folder. The default variant is the one chosen
by measurement (docs/int8.md lists the others and their figures); the
output is deterministic, and quantize.sh checks it against versions.env.
"""

import argparse
import os
import sys
import tempfile

import numpy as np
import onnx
from onnxruntime.quantization import (
    CalibrationDataReader,
    CalibrationMethod,
    QuantFormat,
    QuantType,
    quantize_dynamic,
    quantize_static,
)

LAYERS = 6

# The MatMuls of one encoder layer that carry weights, by their ONNX names.
WEIGHTED = (
    "attention/self/query/MatMul",
    "attention/self/key/MatMul",
    "attention/self/value/MatMul",
    "attention/output/dense/MatMul",
    "intermediate/dense/MatMul",
    "output/dense/MatMul",
)


def node(layer, part):
    return f"/encoder/layer.{layer}/{part}"


def fp32_islands(spec):
    """Node names kept in fp32: a comma-separated list of LAYER:PART
    (PART one of q,k,v,attn-out,ffn-in,ffn-out,all), e.g. "5:ffn-out"."""
    short = dict(zip(("q", "k", "v", "attn-out", "ffn-in", "ffn-out"), WEIGHTED))
    names = []
    for item in filter(None, spec.split(",")):
        layer, _, part = item.partition(":")
        parts = WEIGHTED if part == "all" else (short[part],)
        names += [node(int(layer), p) for p in parts]
    return names


class TextReader(CalibrationDataReader):
    """Feeds the calibration paragraphs one at a time, tokenised as the
    server does (lower-cased WordPiece, at most 256 tokens)."""

    def __init__(self, path, tokenizer_path):
        from tokenizers import Tokenizer

        tok = Tokenizer.from_file(tokenizer_path)
        tok.enable_truncation(256)
        tok.no_padding()
        with open(path, encoding="utf-8") as f:
            lines = [l for l in f.read().split("\n") if not l.startswith("#")]
        paragraphs = [p.strip() for p in "\n".join(lines).split("\n\n") if p.strip()]
        # Long passages too, as the server's chunks are: runs of paragraphs.
        samples = paragraphs + [" ".join(paragraphs[i : i + 6]) for i in range(0, len(paragraphs), 3)]
        self.feeds = []
        for s in samples:
            e = tok.encode(s)
            ids = np.array([e.ids], dtype=np.int64)
            self.feeds.append(
                {
                    "input_ids": ids,
                    "attention_mask": np.ones_like(ids),
                    "token_type_ids": np.zeros_like(ids),
                }
            )
        self.at = 0

    def get_next(self):
        if self.at >= len(self.feeds):
            return None
        self.at += 1
        return self.feeds[self.at - 1]

    def rewind(self):
        self.at = 0


def main():
    cache = os.environ.get("MICRO_RAG_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "micro-rag-mcp"
    )
    fp32_dir = os.path.join(cache, "models", "all-MiniLM-L6-v2")
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--fp32", default=os.path.join(fp32_dir, "model.onnx"))
    ap.add_argument("--tokenizer", default=os.path.join(fp32_dir, "tokenizer.json"))
    ap.add_argument("--out", required=True)
    ap.add_argument("--mode", choices=("dynamic", "static"), default="dynamic")
    ap.add_argument("--per-channel", action=argparse.BooleanOptionalAction, default=True)
    ap.add_argument("--reduce-range", action=argparse.BooleanOptionalAction, default=False,
                    help="7-bit weights: no int16 saturation in the AVX2 u8s8 kernel")
    ap.add_argument("--weight-type", choices=("s8", "u8"), default="s8")
    ap.add_argument("--fp32-islands", default="", help="MatMuls kept in fp32, e.g. 5:ffn-out,0:all")
    ap.add_argument("--calibration", default=os.path.join(here, "quantize", "calibration.txt"))
    ap.add_argument("--calibrate", choices=("minmax", "percentile", "entropy"), default="minmax")
    args = ap.parse_args()

    keep = fp32_islands(args.fp32_islands)
    model = onnx.load(args.fp32)
    known = {n.name for n in model.graph.node}
    missing = [k for k in keep if k not in known]
    if missing:
        sys.exit(f"quantize: no such nodes in {args.fp32}: {missing}")
    wtype = QuantType.QInt8 if args.weight_type == "s8" else QuantType.QUInt8
    with tempfile.TemporaryDirectory() as tmp:
        out_tmp = os.path.join(tmp, "model.onnx")
        if args.mode == "dynamic":
            quantize_dynamic(
                args.fp32, out_tmp,
                op_types_to_quantize=["MatMul"],
                per_channel=args.per_channel,
                reduce_range=args.reduce_range,
                weight_type=wtype,
                nodes_to_exclude=keep,
                # The attention score MatMuls (two activations) stay fp32.
                extra_options={"MatMulConstBOnly": True},
            )
        else:
            method = {
                "minmax": CalibrationMethod.MinMax,
                "percentile": CalibrationMethod.Percentile,
                "entropy": CalibrationMethod.Entropy,
            }[args.calibrate]
            quantize_static(
                args.fp32, out_tmp,
                TextReader(args.calibration, args.tokenizer),
                quant_format=QuantFormat.QDQ,
                op_types_to_quantize=["MatMul"],
                per_channel=args.per_channel,
                reduce_range=args.reduce_range,
                activation_type=QuantType.QUInt8,
                weight_type=wtype,
                nodes_to_exclude=keep,
                calibrate_method=method,
                calibration_providers=["CPUExecutionProvider"],
                extra_options={"MatMulConstBOnly": True, "CalibTensorRangeSymmetric": False},
            )
        q = onnx.load(out_tmp)
        # Nothing of the run (paths, times) in the file: the same input
        # gives the same bytes.
        q.producer_name, q.producer_version, q.doc_string = "micro-rag-mcp scripts/quantize.py", "", ""
        del q.metadata_props[:]
        onnx.save(q, args.out + ".tmp")
    os.replace(args.out + ".tmp", args.out)


if __name__ == "__main__":
    main()
