#!/usr/bin/env python3
"""Quantises the fp32 all-MiniLM-L6-v2 ONNX file to int8 (docs/int8.md).

Run by scripts/quantize.sh, which installs the pinned onnxruntime and onnx
under the cache folder and passes versions.env's QUANTIZE_ARGS, the
variant chosen by measurement (docs/int8.md lists the others and their
figures); the output is deterministic, and quantize.sh checks it against
versions.env.

The outlier file (--outliers, scripts/quantize/outliers.json) is measured
once on the calibration text and committed, so that the build does not
depend on how a CPU rounds the calibration run:
  PYTHONPATH=<cache>/quantize-tools python3 scripts/quantize.py --find-outliers --out scripts/quantize/outliers.json
"""

import argparse
import json
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
    from onnx import helper, numpy_helper

    inits = {t.name: t for t in model.graph.initializer}
    groups = {}
    for n in model.graph.node:
        if n.op_type == "MatMul" and n.input[1] in inits and n.name not in skip:
            groups.setdefault(n.input[0], []).append(n)
    top = input_maxima(model, [nodes[0].name for nodes in groups.values()], reader)
    xmax = {x: top[nodes[0].name] for x, nodes in groups.items()}
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
    topo_sort(model)
    return model


# Each layer's ops whose inputs the outlier file may rewrite, in the fused
# graph: the attention (its Q/K/V weights) and the FFN's two MatMuls.
FUSED_PARTS = {
    "attention": lambda l: f"Attention_{l}",
    "ffn-in": lambda l: node(l, WEIGHTED[4]),
    "ffn-out": lambda l: node(l, WEIGHTED[5]),
}


def fused_ops(spec):
    """Fused-graph node names for a comma-separated list of LAYER:PART
    (PART one of attention, ffn-in, ffn-out)."""
    out = []
    for item in filter(None, spec.split(",")):
        layer, _, part = item.partition(":")
        if part not in FUSED_PARTS:
            sys.exit(f"quantize: unknown part {part!r} in {item!r}")
        out.append(FUSED_PARTS[part](int(layer)))
    return out


def input_maxima(model, names, reader):
    """The largest |x| of each input channel of the named ops, over the
    calibration text run through the fp32 graph."""
    import onnxruntime as ort
    from onnx import helper

    ops = {n.name: n for n in model.graph.node}
    xs = sorted({ops[n].input[0] for n in names})
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    del probe.graph.output[:]
    probe.graph.output.extend(helper.make_tensor_value_info(x, onnx.TensorProto.FLOAT, None) for x in xs)
    sess = ort.InferenceSession(probe.SerializeToString(), providers=["CPUExecutionProvider"])
    top = {}
    reader.rewind()
    while (feed := reader.get_next()) is not None:
        for x, v in zip(xs, sess.run(xs, feed)):
            m = np.abs(v).reshape(-1, v.shape[-1]).max(0)
            top[x] = np.maximum(top.get(x, m), m)
    return {n: top[ops[n].input[0]] for n in names}


def find_outliers(model, reader, split_at, split_above, fp32_at, fp32_top):
    """Chooses, from the calibration text, the input channels each op
    splits (those whose largest |x| is over split_above, into enough
    copies that each is at most split_above) and the ones it computes in
    fp32 (its fp32_top largest)."""
    split, fp32 = fused_ops(split_at), fused_ops(fp32_at)
    top = input_maxima(model, split + fp32, reader)
    out = {"split": {}, "fp32": {}}
    for n in split:
        copies = np.maximum(np.ceil(top[n] / split_above), 1).astype(int)
        out["split"][n] = {str(c): int(k) for c, k in enumerate(copies) if k > 1}
    for n in fp32:
        out["fp32"][n] = sorted(int(c) for c in np.argsort(-top[n])[:fp32_top])
    return out


def apply_outliers(model, choice):
    """Rewrites the fused graph so that per-tensor int8 activations no longer
    spend their range on a few channels (BERT's outlier dimensions, largest
    at [CLS] and [SEP]); in fp32 both compute the same product, up to
    rounding.
    split: channel c with k copies becomes k channels of x_c/k, its weight
    row repeated k times (outlier channel splitting); the op's input grows
    by the copies. fp32: the chosen channels are zeroed in the quantised
    MatMul's input and multiplied by their weight rows in a small fp32
    MatMul added to its output (LLM.int8()'s decomposition). Returns the
    names of the fp32 MatMuls, which must stay unquantised."""
    from onnx import helper, numpy_helper

    both = set(choice["split"]) & set(choice["fp32"])
    if both:
        sys.exit(f"quantize: an op is either split or given fp32 channels, not both: {sorted(both)}")
    inits = {t.name: t for t in model.graph.initializer}
    ops = {n.name: n for n in model.graph.node}
    added, side = [], []
    for i, (name, copies) in enumerate(sorted(choice["split"].items())):
        n, pre = ops[name], f"/outlier_split_{i}"
        x = n.input[0]
        w = numpy_helper.to_array(inits[n.input[1]])
        k = np.ones(w.shape[0], np.int64)
        for c, m in copies.items():
            k[int(c)] = m
        extra = np.repeat(np.arange(len(k)), k - 1).astype(np.int64)
        inv = (1 / k).astype(np.float32)
        model.graph.initializer.extend([
            numpy_helper.from_array(np.concatenate([w, w[extra]]), pre + "_weight"),
            numpy_helper.from_array(inv, pre + "_inv"),
            numpy_helper.from_array(inv[extra], pre + "_inv_copies"),
            numpy_helper.from_array(extra, pre + "_copies"),
        ])
        added += [
            helper.make_node("Mul", [x, pre + "_inv"], [pre + "_scaled"], name=pre + "/Mul"),
            helper.make_node("Gather", [x, pre + "_copies"], [pre + "_gathered"], name=pre + "/Gather", axis=2),
            helper.make_node("Mul", [pre + "_gathered", pre + "_inv_copies"], [pre + "_copied"], name=pre + "/MulCopies"),
            helper.make_node("Concat", [pre + "_scaled", pre + "_copied"], [pre + "_split"], name=pre + "/Concat", axis=2),
        ]
        n.input[0], n.input[1] = pre + "_split", pre + "_weight"
    for i, (name, channels) in enumerate(sorted(choice["fp32"].items())):
        n, pre = ops[name], f"/outlier_fp32_{i}"
        x, y = n.input[0], n.output[0]
        w = numpy_helper.to_array(inits[n.input[1]])
        idx = np.array(channels, np.int64)
        mask = np.ones(w.shape[0], np.float32)
        mask[idx] = 0
        model.graph.initializer.extend([
            numpy_helper.from_array(mask, pre + "_mask"),
            numpy_helper.from_array(idx, pre + "_channels"),
            numpy_helper.from_array(w[idx], pre + "_weight"),
        ])
        added += [
            helper.make_node("Mul", [x, pre + "_mask"], [pre + "_rest"], name=pre + "/Mul"),
            helper.make_node("Gather", [x, pre + "_channels"], [pre + "_outliers"], name=pre + "/Gather", axis=2),
            helper.make_node("MatMul", [pre + "_outliers", pre + "_weight"], [pre + "_fp32"], name=pre + "/MatMul"),
            helper.make_node("Add", [pre + "_int8", pre + "_fp32"], [y], name=pre + "/Add"),
        ]
        n.input[0], n.output[0] = pre + "_rest", pre + "_int8"
        side.append(pre + "/MatMul")
    model.graph.node.extend(added)
    topo_sort(model)
    return side


def topo_sort(model):
    """Orders the graph's nodes so that each comes after its inputs."""
    order, pending = [], list(model.graph.node)
    placed = {i.name for i in model.graph.input} | {t.name for t in model.graph.initializer} | {""}
    while pending:
        rest = []
        for n in pending:
            if all(i in placed for i in n.input):
                order.append(n)
                placed.update(n.output)
            else:
                rest.append(n)
        if len(rest) == len(pending):
            sys.exit("quantize: graph has a cycle or a missing input")
        pending = rest
    del model.graph.node[:]
    model.graph.node.extend(order)


def fused_graph(path):
    """The fp32 file with its BERT subgraphs fused by onnxruntime's
    transformer optimizer: one Attention op a layer (fused softmax and score
    MatMuls ran a 256-token sequence in about 0.8 of the unfused time), skip
    layer norms and bias GELU."""
    from onnxruntime.transformers import optimizer

    fused = optimizer.optimize_model(path, model_type="bert", num_heads=12, hidden_size=384,
                                     opt_level=0, use_gpu=False)
    # Saved and loaded again: the saved file carries the contrib ops' opset.
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "fused.onnx")
        fused.save_model_to_file(out)
        return onnx.load(out)


def tanh_gelu(model):
    """Runs every fused BiasGelu (the erf form) as FastGelu, the tanh form
    of GELU with the same inputs (x, bias): onnxruntime's kernel for it is
    cheaper, and the two differ by under 0.0005 at any x."""
    n = 0
    for node in model.graph.node:
        if node.op_type == "BiasGelu" and node.domain == "com.microsoft":
            node.op_type = "FastGelu"
            n += 1
    if n != LAYERS:
        sys.exit(f"quantize: found {n} BiasGelu ops, want one a layer ({LAYERS})")


def main():
    cache = os.environ.get("MICRO_RAG_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "micro-rag-mcp"
    )
    fp32_dir = os.path.join(cache, "models", "all-MiniLM-L6-v2")
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--fp32", default=os.path.join(fp32_dir, "model.onnx"))
    ap.add_argument("--tokenizer", default=os.path.join(fp32_dir, "tokenizer.json"))
    ap.add_argument("--out", help="the quantised file (with --find-outliers: the outlier file written)")
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
    ap.add_argument("--gelu", choices=("erf", "tanh"), default="erf",
                    help="with --fuse: tanh runs the FFN's GELU as FastGelu, the tanh form: 4 to 6 %% less "
                         "time a Run on an AMD EPYC, but it lost hybrid questions (docs/int8.md)")
    ap.add_argument("--outliers", default="",
                    help="with --fuse: the outlier file (JSON) naming the channels each op splits or keeps in "
                         "fp32; a relative path is taken from this script's folder")
    ap.add_argument("--find-outliers", action="store_true",
                    help="measure the outlier file on the calibration text and write it to --out, quantising nothing")
    ap.add_argument("--split-at", default=",".join(f"{l}:attention,{l}:ffn-in" for l in range(LAYERS)),
                    help="with --find-outliers: the ops whose input channels are split")
    ap.add_argument("--split-above", type=float, default=4, help="with --find-outliers: the largest |x| a copy keeps")
    ap.add_argument("--fp32-at", default=",".join(f"{l}:ffn-out" for l in range(4)),
                    help="with --find-outliers: the MatMuls that keep their largest input channels in fp32")
    ap.add_argument("--fp32-top", type=int, default=4, help="with --find-outliers: how many channels each keeps")
    # Percentile and entropy fail on calibration samples of unequal length.
    ap.add_argument("--calibrate", choices=("minmax",), default="minmax")
    args = ap.parse_args()
    if not args.out:
        ap.error("--out is required")
    if args.find_outliers:
        choice = find_outliers(fused_graph(args.fp32), TextReader(args.calibration, args.tokenizer),
                               args.split_at, args.split_above, args.fp32_at, args.fp32_top)
        # One line an op, so that a new measurement's diff reads per op.
        kinds = [f' "{k}": {{\n' + ",\n".join(f"  {json.dumps(n)}: {json.dumps(v)}" for n, v in sorted(ops.items()))
                 + "\n }" for k, ops in sorted(choice.items())]
        with open(args.out, "w", encoding="utf-8") as f:
            f.write("{\n" + ",\n".join(kinds) + "\n}\n")
        return
    if args.outliers and not args.fuse:
        ap.error("--outliers names ops of the fused graph: it needs --fuse")
    if args.gelu != "erf" and not args.fuse:
        ap.error("--gelu names the fused graph's GELU: it needs --fuse")

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
            fused = fused_graph(src)
            if args.gelu == "tanh":
                tanh_gelu(fused)
            if args.outliers:
                path = os.path.join(here, args.outliers)
                with open(path, encoding="utf-8") as f:
                    keep += apply_outliers(fused, json.load(f))
            src = os.path.join(tmp, "fused.onnx")
            onnx.save(fused, src)
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
