package embed

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/internal/model"
)

// TestReadGraphIOMatchesRuntime: for every model the project knows, the
// file's own signature is what an onnxruntime session reports.
func TestReadGraphIOMatchesRuntime(t *testing.T) {
	testEmbedder(t) // loads the runtime for sessionGraphIO
	for _, name := range model.Names() {
		m, err := model.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		files, err := m.Locate("")
		if err != nil {
			t.Fatalf("%s: %v (make setup and make models install it)", name, err)
		}
		ins, outs, err := readGraphIO(files.ONNX)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		wantIns, wantOuts, err := sessionGraphIO(files.ONNX)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(ins, wantIns) || !reflect.DeepEqual(outs, wantOuts) {
			t.Errorf("%s: read %+v -> %+v, onnxruntime says %+v -> %+v", name, ins, outs, wantIns, wantOuts)
		}
	}
}

// protoField appends one length-delimited protobuf field.
func protoField(b []byte, num int, body []byte) []byte {
	b = binary.AppendUvarint(b, uint64(num)<<3|wireBytes)
	b = binary.AppendUvarint(b, uint64(len(body)))
	return append(b, body...)
}

// protoVarint appends one varint protobuf field.
func protoVarint(b []byte, num int, v uint64) []byte {
	return binary.AppendUvarint(binary.AppendUvarint(b, uint64(num)<<3|wireVarint), v)
}

// valueInfoBytes encodes a tensor ValueInfoProto; a negative dim is symbolic.
func valueInfoBytes(name string, elem uint64, dims ...int64) []byte {
	var shape []byte
	for _, d := range dims {
		var dim []byte
		if d < 0 {
			dim = protoField(nil, 2, []byte("batch")) // dim_param
		} else {
			dim = protoVarint(nil, dimValue, uint64(d))
		}
		shape = protoField(shape, shapeDim, dim)
	}
	tensor := protoField(protoVarint(nil, tensorElemType, elem), tensorShape, shape)
	return protoField(protoField(nil, valueName, []byte(name)), valueType, protoField(nil, typeTensor, tensor))
}

// oldStyleModel is a small ModelProto as IR version 3 writes it: the
// initializer w is listed among the inputs too, and fields this reader
// skips (ir_version, a node, a doc string, a float32 and a float64) sit
// between the ones it reads.
func oldStyleModel() []byte {
	var graph []byte
	graph = protoField(graph, 1, protoField(nil, 4, []byte("MatMul"))) // node with op_type
	graph = protoField(graph, graphInput, valueInfoBytes("x", onnxFloat, -1, 4))
	graph = protoField(graph, graphInput, valueInfoBytes("w", onnxFloat, 4, 3))
	init := protoField(nil, 9, make([]byte, 48)) // raw_data before the name
	init = protoField(init, tensorName, []byte("w"))
	graph = protoField(graph, graphInitializer, init)
	graph = protoField(graph, 10, []byte("a doc string"))
	graph = binary.LittleEndian.AppendUint32(binary.AppendUvarint(graph, 13<<3|wireFixed32), 7)
	graph = protoField(graph, graphOutput, valueInfoBytes("y", onnxFloat, -1, 2, 384))
	b := protoVarint(nil, 1, 3) // ir_version
	b = binary.LittleEndian.AppendUint64(binary.AppendUvarint(b, 9<<3|wireFixed64), 1)
	return protoField(b, modelGraph, graph)
}

func writeTemp(t *testing.T, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "model.onnx")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestReadGraphIOLeavesOutInitializers: a file that lists an initializer
// among its inputs reports only the real input, as onnxruntime does.
func TestReadGraphIOLeavesOutInitializers(t *testing.T) {
	ins, outs, err := readGraphIO(writeTemp(t, oldStyleModel()))
	if err != nil {
		t.Fatal(err)
	}
	wantIns := []graphValue{{Name: "x", ElemType: onnxFloat, Dims: []int64{-1, 4}}}
	wantOuts := []graphValue{{Name: "y", ElemType: onnxFloat, Dims: []int64{-1, 2, 384}}}
	if !reflect.DeepEqual(ins, wantIns) || !reflect.DeepEqual(outs, wantOuts) {
		t.Errorf("read %+v -> %+v, want %+v -> %+v", ins, outs, wantIns, wantOuts)
	}
}

// TestReadGraphIORefusesDamage: cut short, empty, not protobuf, or a
// length that runs past the file: an error, never a panic or a huge read;
// discoverNames then asks onnxruntime, whose error names the file.
func TestReadGraphIORefusesDamage(t *testing.T) {
	whole := oldStyleModel()
	huge := protoField(nil, modelGraph, protoField(nil, graphInput, make([]byte, maxSmallMessage+1)))
	for what, b := range map[string][]byte{
		"cut short":       whole[:len(whole)-5],
		"empty":           {},
		"text":            []byte("this is not a model\n"),
		"length too long": append(binary.AppendUvarint([]byte{modelGraph<<3 | wireBytes}, 1<<40), 1, 2, 3),
		"huge value info": huge,
	} {
		if _, _, err := readGraphIO(writeTemp(t, b)); err == nil {
			t.Errorf("%s: no error", what)
		}
	}
	testEmbedder(t)
	p := writeTemp(t, whole[:len(whole)-5])
	if _, _, _, err := discoverNames(p); err == nil || !strings.Contains(err.Error(), p) {
		t.Errorf("discoverNames of a damaged file: %v, want an error naming it", err)
	}
}

// FuzzReadGraphIO: any bytes give a result or an error, never a panic.
func FuzzReadGraphIO(f *testing.F) {
	f.Add(oldStyleModel())
	f.Add([]byte{modelGraph<<3 | wireBytes, 0x80})
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(dir, "m.onnx")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		readGraphIO(p)
	})
}
