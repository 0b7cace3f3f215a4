package embed

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// graphValue is one graph input or output as an ONNX file declares it.
type graphValue struct {
	Name     string
	ElemType int32   // TensorProto.DataType: 1 float, 7 int64; 0 if not a tensor
	Dims     []int64 // -1 for a symbolic or unknown dimension
}

// ONNX element types the embedder checks.
const (
	onnxFloat = 1
	onnxInt64 = 7
)

// Protobuf field numbers of the ONNX messages read here (onnx.proto).
const (
	modelGraph       = 7  // ModelProto.graph
	graphInitializer = 5  // GraphProto.initializer
	graphInput       = 11 // GraphProto.input
	graphOutput      = 12 // GraphProto.output
	tensorName       = 8  // TensorProto.name
	valueName        = 1  // ValueInfoProto.name
	valueType        = 2  // ValueInfoProto.type
	typeTensor       = 1  // TypeProto.tensor_type
	tensorElemType   = 1  // TypeProto.Tensor.elem_type
	tensorShape      = 2  // TypeProto.Tensor.shape
	shapeDim         = 1  // TensorShapeProto.dim
	dimValue         = 1  // TensorShapeProto.Dimension.dim_value
	wireVarint       = 0
	wireFixed64      = 1
	wireBytes        = 2
	wireFixed32      = 5
	maxSmallMessage  = 1 << 16 // a value info, its type or a name is far smaller
)

var errONNXFormat = errors.New("not an ONNX model file this reader understands")

// readGraphIO reads the graph's inputs (less those that are initializers,
// as onnxruntime reports them) and outputs from the ONNX file at path
// without creating an onnxruntime session: a session only to read these
// cost a second load of the model (about 0.12 s of CPU each at start-up).
// Weights are skipped by their length, never read.
func readGraphIO(path string) (ins, outs []graphValue, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	r := &protoReader{r: &window{r: f}, end: st.Size()}
	var graph *span
	for r.pos < r.end {
		num, wire, err := r.key()
		if err != nil {
			return nil, nil, err
		}
		if num == modelGraph && wire == wireBytes {
			s, err := r.bytesSpan()
			if err != nil {
				return nil, nil, err
			}
			graph = &s
			continue
		}
		if err := r.skip(wire); err != nil {
			return nil, nil, err
		}
	}
	if graph == nil {
		return nil, nil, fmt.Errorf("%w: no graph", errONNXFormat)
	}
	r.pos, r.end = graph.start, graph.end
	inits := map[string]bool{}
	for r.pos < r.end {
		num, wire, err := r.key()
		if err != nil {
			return nil, nil, err
		}
		if wire != wireBytes || (num != graphInput && num != graphOutput && num != graphInitializer) {
			if err := r.skip(wire); err != nil {
				return nil, nil, err
			}
			continue
		}
		s, err := r.bytesSpan()
		if err != nil {
			return nil, nil, err
		}
		if num == graphInitializer {
			name, err := r.sub(s).initializerName()
			if err != nil {
				return nil, nil, err
			}
			inits[name] = true
			continue
		}
		sub, err := r.small(s)
		if err != nil {
			return nil, nil, err
		}
		v, err := sub.valueInfo()
		if err != nil {
			return nil, nil, err
		}
		if num == graphInput {
			ins = append(ins, v)
		} else {
			outs = append(outs, v)
		}
	}
	// Files of IR version < 4 list their initializers among the inputs too.
	kept := ins[:0]
	for _, v := range ins {
		if !inits[v.Name] {
			kept = append(kept, v)
		}
	}
	return kept, outs, nil
}

// span is a length-delimited field's contents: [start, end) in the file.
type span struct{ start, end int64 }

// protoReader walks protobuf fields of a file between pos and end.
type protoReader struct {
	r        *window
	pos, end int64
	buf      [binary.MaxVarintLen64]byte
}

// window reads a file through one 64 KiB buffer, so that walking many
// small fields costs a read a buffer, not one a field.
type window struct {
	r   io.ReaderAt
	buf []byte
	off int64 // of buf[0] in the file
}

// ReadAt is io.ReaderAt's, served from the buffer when it holds [off,
// off+len(p)), else from a buffer refilled at off.
func (w *window) ReadAt(p []byte, off int64) (int, error) {
	if off >= w.off && off+int64(len(p)) <= w.off+int64(len(w.buf)) {
		return copy(p, w.buf[off-w.off:]), nil
	}
	if len(p) > 1<<16 {
		return w.r.ReadAt(p, off)
	}
	if cap(w.buf) < 1<<16 {
		w.buf = make([]byte, 1<<16)
	}
	n, err := w.r.ReadAt(w.buf[:cap(w.buf)], off)
	w.buf, w.off = w.buf[:n], off
	if n >= len(p) {
		return copy(p, w.buf), nil
	}
	copy(p, w.buf)
	return n, err
}

// sub is a reader over s alone.
func (p *protoReader) sub(s span) *protoReader { return &protoReader{r: p.r, pos: s.start, end: s.end} }

// small is sub for a message that must be small (a value info and its
// parts): a huge one means the file is not what it claims.
func (p *protoReader) small(s span) (*protoReader, error) {
	if s.end-s.start > maxSmallMessage {
		return nil, fmt.Errorf("%w: a field of %d bytes where a few are expected", errONNXFormat, s.end-s.start)
	}
	return p.sub(s), nil
}

func (p *protoReader) varint() (uint64, error) {
	n := min(int64(len(p.buf)), p.end-p.pos)
	if n <= 0 {
		return 0, fmt.Errorf("%w: truncated", errONNXFormat)
	}
	got, err := p.r.ReadAt(p.buf[:n], p.pos)
	if got < int(n) && err != nil && err != io.EOF {
		return 0, err
	}
	v, used := binary.Uvarint(p.buf[:got])
	if used <= 0 {
		return 0, fmt.Errorf("%w: bad varint at byte %d", errONNXFormat, p.pos)
	}
	p.pos += int64(used)
	return v, nil
}

func (p *protoReader) key() (num uint64, wire int, err error) {
	k, err := p.varint()
	if err != nil {
		return 0, 0, err
	}
	return k >> 3, int(k & 7), nil
}

func (p *protoReader) bytesSpan() (span, error) {
	n, err := p.varint()
	if err != nil {
		return span{}, err
	}
	if n > uint64(p.end-p.pos) {
		return span{}, fmt.Errorf("%w: a field of %d bytes runs past its message", errONNXFormat, n)
	}
	s := span{p.pos, p.pos + int64(n)}
	p.pos = s.end
	return s, nil
}

func (p *protoReader) skip(wire int) error {
	var n int64
	switch wire {
	case wireVarint:
		_, err := p.varint()
		return err
	case wireFixed64:
		n = 8
	case wireFixed32:
		n = 4
	case wireBytes:
		_, err := p.bytesSpan()
		return err
	default:
		return fmt.Errorf("%w: wire type %d at byte %d", errONNXFormat, wire, p.pos)
	}
	if n > p.end-p.pos {
		return fmt.Errorf("%w: truncated", errONNXFormat)
	}
	p.pos += n
	return nil
}

// message is the next field's contents as a small message (small).
func (p *protoReader) message() (*protoReader, error) {
	s, err := p.bytesSpan()
	if err != nil {
		return nil, err
	}
	return p.small(s)
}

// str reads s as a string; only for the small fields a name is.
func (p *protoReader) str(s span) (string, error) {
	if s.end-s.start > maxSmallMessage {
		return "", fmt.Errorf("%w: a name of %d bytes", errONNXFormat, s.end-s.start)
	}
	b := make([]byte, s.end-s.start)
	if _, err := p.r.ReadAt(b, s.start); err != nil && !(err == io.EOF && len(b) == 0) {
		return "", err
	}
	return string(b), nil
}

// initializerName reads a TensorProto's name, skipping its data.
func (p *protoReader) initializerName() (string, error) {
	for p.pos < p.end {
		num, wire, err := p.key()
		if err != nil {
			return "", err
		}
		if num == tensorName && wire == wireBytes {
			s, err := p.bytesSpan()
			if err != nil {
				return "", err
			}
			return p.str(s)
		}
		if err := p.skip(wire); err != nil {
			return "", err
		}
	}
	return "", nil
}

// valueInfo reads a ValueInfoProto: name, and for a tensor its element
// type and shape.
func (p *protoReader) valueInfo() (graphValue, error) {
	var v graphValue
	err := p.fields(func(num uint64, wire int) (bool, error) {
		switch {
		case num == valueName && wire == wireBytes:
			s, err := p.bytesSpan()
			if err != nil {
				return true, err
			}
			v.Name, err = p.str(s)
			return true, err
		case num == valueType && wire == wireBytes:
			t, err := p.message()
			if err != nil {
				return true, err
			}
			err = t.fields(func(num uint64, wire int) (bool, error) {
				if num != typeTensor || wire != wireBytes {
					return false, nil
				}
				tt, err := t.message()
				if err != nil {
					return true, err
				}
				return true, tt.tensorType(&v)
			})
			return true, err
		}
		return false, nil
	})
	return v, err
}

// tensorType reads a TypeProto.Tensor into v.
func (p *protoReader) tensorType(v *graphValue) error {
	return p.fields(func(num uint64, wire int) (bool, error) {
		switch {
		case num == tensorElemType && wire == wireVarint:
			t, err := p.varint()
			v.ElemType = int32(t)
			return true, err
		case num == tensorShape && wire == wireBytes:
			shape, err := p.message()
			if err != nil {
				return true, err
			}
			return true, shape.fields(func(num uint64, wire int) (bool, error) {
				if num != shapeDim || wire != wireBytes {
					return false, nil
				}
				dim, err := shape.message()
				if err != nil {
					return true, err
				}
				d := int64(-1)
				err = dim.fields(func(num uint64, wire int) (bool, error) {
					if num != dimValue || wire != wireVarint {
						return false, nil
					}
					x, err := dim.varint()
					d = int64(x)
					return true, err
				})
				v.Dims = append(v.Dims, d)
				return true, err
			})
		}
		return false, nil
	})
}

// fields calls read for each field of the message; read consumes the
// field and says so, else the field is skipped.
func (p *protoReader) fields(read func(num uint64, wire int) (bool, error)) error {
	for p.pos < p.end {
		num, wire, err := p.key()
		if err != nil {
			return err
		}
		done, err := read(num, wire)
		if err != nil {
			return err
		}
		if !done {
			if err := p.skip(wire); err != nil {
				return err
			}
		}
	}
	return nil
}
