#!/usr/bin/env python3
"""Quantises the fp32 all-MiniLM-L6-v2 ONNX file to int8 (docs/int8.md).

Run by scripts/quantize.sh, which installs the pinned onnxruntime and onnx
under the cache folder and passes versions.env's QUANTIZE_ARGS, the
variant chosen by measurement (docs/int8.md lists the others and their
figures); the output is deterministic, and quantize.sh checks it against
versions.env.
"""

import argparse
import os
import sys
import tempfile

import numpy as np
import onnx
import onnx.version_converter
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


def smooth(model, reader, alpha, skip):
    """SmoothQuant: divides each weighted MatMul input's channels by s and
    multiplies the weight's rows by s, which leaves the product as it was
    but moves the activations' outlier channels (which per-tensor int8
    activations cannot resolve) into the weights, which are quantised per
    channel. s = max|x|^alpha / max|w|^(1-alpha), x's maxima measured on
    the calibration text. A Mul before each group of MatMuls sharing an
    input does the division."""
    import onnxruntime as ort
    from onnx import helper, numpy_helper

    inits = {t.name: t for t in model.graph.initializer}
    groups = {}
    for n in model.graph.node:
        if n.op_type == "MatMul" and n.input[1] in inits and n.name not in skip:
            groups.setdefault(n.input[0], []).append(n)
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    del probe.graph.output[:]
    probe.graph.output.extend(helper.make_tensor_value_info(x, onnx.TensorProto.FLOAT, None) for x in groups)
    sess = ort.InferenceSession(probe.SerializeToString(), providers=["CPUExecutionProvider"])
    xmax = {}
    reader.rewind()
    while (feed := reader.get_next()) is not None:
        for x, v in zip(groups, sess.run(list(groups), feed)):
            m = np.abs(v).reshape(-1, v.shape[-1]).max(0)
            xmax[x] = np.maximum(xmax.get(x, m), m)
    for i, (x, nodes) in enumerate(groups.items()):
        ws = [numpy_helper.to_array(inits[n.input[1]]) for n in nodes]
        wmax = np.max([np.abs(w).max(1) for w in ws], axis=0)
        sc = (np.maximum(xmax[x], 1e-5) ** alpha / np.maximum(wmax, 1e-5) ** (1 - alpha)).astype(np.float32)
        inv = f"smooth_{i}_inv"
        model.graph.initializer.append(numpy_helper.from_array((1 / sc).astype(np.float32), inv))
        out = f"{x}_smoothed"
        model.graph.node.append(helper.make_node("Mul", [x, inv], [out], name=f"/smooth_{i}/Mul"))
        for n, w in zip(nodes, ws):
            inits[n.input[1]].CopyFrom(numpy_helper.from_array((w * sc[:, None]).astype(np.float32), n.input[1]))
            n.input[0] = out
    # Keep the graph topologically sorted: each Mul before its consumers.
    order, pending = [], list(model.graph.node)
    placed = {i.name for i in model.graph.input} | {t.name for t in model.graph.initializer}
    while pending:
        rest = []
        for n in pending:
            if all(not i or i in placed for i in n.input):
                order.append(n)
                placed.update(n.output)
            else:
                rest.append(n)
        if len(rest) == len(pending):
            sys.exit("quantize: graph has a cycle or a missing input")
        pending = rest
    del model.graph.node[:]
    model.graph.node.extend(order)
    return model


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
    ap.add_argument("--weight-type", choices=("s8", "u8"), default="s8",
                    help="u8: no int16 saturation in the AVX2 u8s8 kernel either")
    ap.add_argument("--fp32-islands", default="", help="MatMuls kept in fp32, e.g. 5:ffn-out,0:all")
    ap.add_argument("--calibration", default=os.path.join(here, "quantize", "calibration.txt"))
    ap.add_argument("--smooth", type=float, default=0, help="SmoothQuant with this alpha (0: off)")
    ap.add_argument("--fuse", action="store_true",
                    help="first fuse the BERT subgraphs (attention, layer norms, GELU) with onnxruntime's "
                         "transformer optimizer; the attention ops' Q/K/V weights are then quantised with them")
    # Percentile and entropy fail on calibration samples of unequal length.
    ap.add_argument("--calibrate", choices=("minmax",), default="minmax")
    args = ap.parse_args()

    keep = fp32_islands(args.fp32_islands)
    model = onnx.load(args.fp32)
    known = {n.name for n in model.graph.node}
    missing = [k for k in keep if k not in known]
    if missing:
        sys.exit(f"quantize: no such nodes in {args.fp32}: {missing}")
    src = args.fp32
    if args.fuse:
        if args.mode != "dynamic" or args.smooth:
            sys.exit("quantize: --fuse is for dynamic quantisation alone")
        # Q, K and V become one Attention op: they cannot be islands.
        inside = [k for k in keep if k.endswith(WEIGHTED[:3])]
        if inside:
            sys.exit(f"quantize: with --fuse, Q/K/V cannot stay fp32: {inside}")
    if args.smooth:
        model = smooth(model, TextReader(args.calibration, args.tokenizer), args.smooth, set(keep))
    wtype = QuantType.QInt8 if args.weight_type == "s8" else QuantType.QUInt8
    with tempfile.TemporaryDirectory() as tmp:
        out_tmp = os.path.join(tmp, "model.onnx")
        if args.smooth:
            src = os.path.join(tmp, "smoothed.onnx")
            onnx.save(model, src)
        if args.fuse:
            # One Attention op a layer (fused softmax and score MatMuls)
            # ran a 256-token sequence in about 0.8 of the unfused time.
            from onnxruntime.transformers import optimizer

            fused = optimizer.optimize_model(src, model_type="bert", num_heads=12, hidden_size=384,
                                             opt_level=0, use_gpu=False)
            src = os.path.join(tmp, "fused.onnx")
            fused.save_model_to_file(src)
        extra = {"MatMulConstBOnly": True}
        if args.fuse:
            # The fused graph's contrib ops defeat shape inference: a
            # tensor of unknown type is taken as float.
            extra["DefaultTensorType"] = onnx.TensorProto.FLOAT
        if args.mode == "dynamic":
            quantize_dynamic(
                src, out_tmp,
                op_types_to_quantize=["MatMul", "Attention"] if args.fuse else ["MatMul"],
                per_channel=args.per_channel,
                reduce_range=args.reduce_range,
                weight_type=wtype,
                nodes_to_exclude=keep,
                # The attention score MatMuls (two activations) stay fp32.
                extra_options=extra,
            )
        else:
            # Per-channel QDQ needs DequantizeLinear's axis: opset 13.
            src13 = os.path.join(tmp, "fp32-opset13.onnx")
            onnx.save(onnx.version_converter.convert_version(model, 13), src13)
            method = CalibrationMethod.MinMax
            quantize_static(
                src13, out_tmp,
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
