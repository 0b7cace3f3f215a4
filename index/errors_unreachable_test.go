package index

import (
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"
)

type sqlStateError string

func (e sqlStateError) Error() string    { return "server error " + string(e) }
func (e sqlStateError) SQLState() string { return string(e) }

func TestUnreachable(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("postgres: kNN: %w", refused), true},
		{fmt.Errorf("postgres: kNN: %w", sqlStateError("57P01")), true}, // admin shutdown
		{fmt.Errorf("commit: %w", sqlStateError("08006")), true},        // connection failure
		{fmt.Errorf("copy: %w", sqlStateError("42703")), false},         // undefined column
		{errors.New("postgres: kNN: something else"), false},
		{nil, false},
	} {
		if got := Unreachable(tc.err); got != tc.want {
			t.Errorf("Unreachable(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
