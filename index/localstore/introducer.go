package localstore

import "github.com/micro-rag/micro-rag-mcp/index"

// The introducer is the one goroutine that publishes snapshots and decides
// who commits in this process (bleve scorch's introducer pattern). Writers,
// background merges and refreshes send it introductions over a channel and
// wait for its answer; nothing contests a lock. It owns the writer role:
// while a Writer holds it, a finished merge waits for that writer's next
// commit and a refresh is not needed (the writer publishes what it commits).
// With no writer, the introducer installs a finished merge itself.
//
// Fields only the introducer goroutine touches: writerActive, and, outside
// a writer's tenure, loaded and header (a writer reads and sets them through
// its introductions, which order them).

// startIntroducer starts the goroutine; Close stops it.
func (s *Store) startIntroducer() {
	s.intros = make(chan introduction)
	s.introDone = make(chan struct{})
	go s.introducer()
}

func (s *Store) introducer() {
	defer close(s.introDone)
	for in := range s.intros {
		r := s.handle(in)
		in.reply <- r
		if in.kind == introClose {
			return
		}
	}
}

// handle runs one introduction on the introducer goroutine.
func (s *Store) handle(in introduction) introReply {
	switch in.kind {
	case introBegin:
		if s.writerActive {
			return introReply{err: index.ErrLocked}
		}
		s.writerActive = true
		return introReply{ok: true}
	case introEnd:
		s.writerActive = false
		s.installFinishedMerge()
	case introPublish:
		s.loaded = in.stamp
		s.publish(in.snap)
		if in.startMerge {
			s.startMerge(in.snap, in.doc)
		}
	case introMergeWritten, introClose:
		if !s.writerActive {
			s.installFinishedMerge()
		}
	case introRefresh:
		if s.writerActive {
			return introReply{} // the writer publishes what it commits
		}
		ok, err := s.refresh()
		s.installFinishedMerge()
		return introReply{ok: ok, err: err}
	case introStartMerge:
		return introReply{ok: !s.writerActive && s.startIdleMerge()}
	}
	return introReply{ok: true}
}

// introducePublish hands snap (with the reference the current snapshot
// keeps) to the introducer; after Close nobody publishes it.
func (s *Store) introducePublish(in introduction) {
	in.kind = introPublish
	if r := s.introduce(in); r.err != nil {
		in.snap.Release()
	}
}
