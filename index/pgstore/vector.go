package pgstore

import (
	"context"
	"database/sql/driver"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// vectorCodec sends and reads pgvector's vector type as []float32 through
// pgx. Binary form (vector_send / vector_recv in pgvector): int16 dimension,
// int16 zero, then the values as big-endian float32. Text form: [x,y,...].
type vectorCodec struct{}

func (vectorCodec) FormatSupported(f int16) bool {
	return f == pgtype.BinaryFormatCode || f == pgtype.TextFormatCode
}

func (vectorCodec) PreferredFormat() int16 { return pgtype.BinaryFormatCode }

func (vectorCodec) PlanEncode(_ *pgtype.Map, _ uint32, format int16, value any) pgtype.EncodePlan {
	if _, ok := value.([]float32); !ok {
		return nil
	}
	if format == pgtype.TextFormatCode {
		return encodeVectorText{}
	}
	return encodeVectorBinary{}
}

type encodeVectorBinary struct{}

func (encodeVectorBinary) Encode(value any, buf []byte) ([]byte, error) {
	v := value.([]float32)
	if v == nil {
		return nil, nil // NULL
	}
	if len(v) > math.MaxInt16 {
		return nil, fmt.Errorf("vector of %d values: pgvector takes at most %d", len(v), math.MaxInt16)
	}
	buf = binary.BigEndian.AppendUint16(buf, uint16(len(v)))
	buf = binary.BigEndian.AppendUint16(buf, 0)
	for _, x := range v {
		buf = binary.BigEndian.AppendUint32(buf, math.Float32bits(x))
	}
	return buf, nil
}

type encodeVectorText struct{}

func (encodeVectorText) Encode(value any, buf []byte) ([]byte, error) {
	v := value.([]float32)
	if v == nil {
		return nil, nil
	}
	return appendVectorText(buf, v), nil
}

// appendVectorText writes pgvector's text form, each value in the fewest
// digits that read back as the same float32.
func appendVectorText(buf []byte, v []float32) []byte {
	buf = append(buf, '[')
	for i, x := range v {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = strconv.AppendFloat(buf, float64(x), 'g', -1, 32)
	}
	return append(buf, ']')
}

func (vectorCodec) PlanScan(_ *pgtype.Map, _ uint32, format int16, target any) pgtype.ScanPlan {
	if _, ok := target.(*[]float32); !ok {
		return nil
	}
	if format == pgtype.TextFormatCode {
		return scanVectorText{}
	}
	return scanVectorBinary{}
}

type scanVectorBinary struct{}

func (scanVectorBinary) Scan(src []byte, target any) error {
	dst := target.(*[]float32)
	if src == nil {
		*dst = nil
		return nil
	}
	v, err := decodeVectorBinary(src, (*dst)[:0])
	*dst = v
	return err
}

var errVectorBytes = errors.New("pgvector: malformed binary vector")

func decodeVectorBinary(src []byte, into []float32) ([]float32, error) {
	if len(src) < 4 {
		return nil, errVectorBytes
	}
	n := int(binary.BigEndian.Uint16(src))
	if len(src) != 4+4*n {
		return nil, errVectorBytes
	}
	out := into
	if cap(out) < n {
		out = make([]float32, 0, n)
	}
	for i := range n {
		out = append(out, math.Float32frombits(binary.BigEndian.Uint32(src[4+4*i:])))
	}
	return out, nil
}

type scanVectorText struct{}

func (scanVectorText) Scan(src []byte, target any) error {
	dst := target.(*[]float32)
	if src == nil {
		*dst = nil
		return nil
	}
	v, err := parseVectorText(string(src))
	*dst = v
	return err
}

func parseVectorText(s string) ([]float32, error) {
	if len(s) < 2 || s[0] != '[' || s[len(s)-1] != ']' {
		return nil, fmt.Errorf("pgvector: malformed vector text %.20q", s)
	}
	var out []float32
	if body := s[1 : len(s)-1]; body != "" {
		for part := range strings.SplitSeq(body, ",") {
			x, err := strconv.ParseFloat(part, 32)
			if err != nil {
				return nil, fmt.Errorf("pgvector: malformed vector text: %v", err)
			}
			out = append(out, float32(x))
		}
	}
	return out, nil
}

func (c vectorCodec) DecodeDatabaseSQLValue(m *pgtype.Map, oid uint32, format int16, src []byte) (driver.Value, error) {
	v, err := c.DecodeValue(m, oid, format, src)
	if err != nil || v == nil {
		return nil, err
	}
	return string(appendVectorText(nil, v.([]float32))), nil
}

func (vectorCodec) DecodeValue(_ *pgtype.Map, _ uint32, format int16, src []byte) (any, error) {
	if src == nil {
		return nil, nil
	}
	if format == pgtype.TextFormatCode {
		return parseVectorText(string(src))
	}
	return decodeVectorBinary(src, nil)
}

// registerVector teaches conn the vector type's OID in its database (the
// extension's type has no fixed OID).
func registerVector(ctx context.Context, conn *pgx.Conn) error {
	var oid uint32
	err := conn.QueryRow(ctx, "SELECT oid FROM pg_type WHERE typname = 'vector' AND typnamespace = (SELECT extnamespace FROM pg_extension WHERE extname = 'vector')").Scan(&oid)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil // before CREATE EXTENSION: Open creates it and connects again
	}
	if err != nil {
		return fmt.Errorf("look up the vector type: %w", err)
	}
	conn.TypeMap().RegisterType(&pgtype.Type{Name: "vector", OID: oid, Codec: vectorCodec{}})
	return nil
}
