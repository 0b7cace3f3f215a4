package index

import "sync"

// ViewMemo keeps values derived from one view, for its Memo method: a
// view never changes, so what is computed from it is computed once and
// dropped with it. The zero value is ready; it must not be copied.
type ViewMemo struct {
	mu   sync.Mutex
	vals map[any]any
}

// Memo returns the value compute gives for key, calling compute only the
// first time key is asked for (and again after it failed).
func (m *ViewMemo) Memo(key any, compute func() (any, error)) (any, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if v, ok := m.vals[key]; ok {
		return v, nil
	}
	v, err := compute()
	if err != nil {
		return nil, err
	}
	if m.vals == nil {
		m.vals = map[any]any{}
	}
	m.vals[key] = v
	return v, nil
}
