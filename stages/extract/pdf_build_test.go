package extract

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"strings"
)

// buildPDF returns a PDF whose object i+1 is objs[i], with a valid
// cross-reference table.
func buildPDF(objs ...[]byte) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offs := make([]int, len(objs))
	for i, o := range objs {
		offs[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n", i+1)
		b.Write(o)
		b.WriteString("\nendobj\n")
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, o := range offs {
		fmt.Fprintf(&b, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

// streamObj is a stream object with the entries dict (such as
// "/Filter /FlateDecode") and data.
func streamObj(dict string, data []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "<< %s /Length %d >>\nstream\n", dict, len(data))
	b.Write(data)
	b.WriteString("\nendstream")
	return b.Bytes()
}

// onePagePDF is a one-page PDF in Helvetica whose content streams are
// contents (objects from 5 on), followed by the objects extra.
func onePagePDF(contents [][]byte, extra ...[]byte) []byte {
	var refs []string
	for i := range contents {
		refs = append(refs, fmt.Sprintf("%d 0 R", 5+i))
	}
	objs := [][]byte{
		[]byte("<< /Type /Catalog /Pages 2 0 R >>"),
		[]byte("<< /Type /Pages /Kids [3 0 R] /Count 1 >>"),
		[]byte("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >> /Contents [" +
			strings.Join(refs, " ") + "] >>"),
		[]byte("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"),
	}
	objs = append(objs, contents...)
	return buildPDF(append(objs, extra...)...)
}

// zlibZeros is n zero bytes compressed with zlib, without holding them.
func zlibZeros(n int) []byte {
	var b bytes.Buffer
	w, _ := zlib.NewWriterLevel(&b, zlib.BestCompression)
	zero := make([]byte, 64<<10)
	for n > 0 {
		k := min(n, len(zero))
		w.Write(zero[:k])
		n -= k
	}
	w.Close()
	return b.Bytes()
}

func zlibBytes(p []byte) []byte {
	var b bytes.Buffer
	w := zlib.NewWriter(&b)
	w.Write(p)
	w.Close()
	return b.Bytes()
}
