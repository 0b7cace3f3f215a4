package index

import (
	"errors"
	"testing"
)

// A memo computes a key's value once, keeps no failure, and keeps keys
// apart.
func TestViewMemo(t *testing.T) {
	var m ViewMemo
	calls := 0
	get := func(key any, err error) (any, error) {
		return m.Memo(key, func() (any, error) {
			calls++
			if err != nil {
				return nil, err
			}
			return calls, nil
		})
	}
	boom := errors.New("boom")
	if _, err := get("a", boom); !errors.Is(err, boom) {
		t.Fatalf("failing compute: %v, want boom", err)
	}
	for range 2 {
		if v, err := get("a", nil); err != nil || v != 2 {
			t.Fatalf("after a failure: %v %v, want 2 computed once more", v, err)
		}
	}
	if v, err := get("b", nil); err != nil || v != 3 || calls != 3 {
		t.Fatalf("another key: %v %v (%d calls), want 3", v, err, calls)
	}
}
