package localstore

import (
	"errors"

	"github.com/micro-rag/micro-rag-mcp/index"
)

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

type introKind uint8

const (
	introBegin        introKind = iota // a Writer asks for the writer role
	introEnd                           // the Writer gives it back
	introPublish                       // a snapshot to publish (commit or load)
	introMergeWritten                  // a background merge wrote its file
	introRefresh                       // load another process's commit
	introStartMerge                    // start a background merge when idle
	introClose                         // install what can be, then stop
)

type introduction struct {
	kind introKind
	// introPublish: the snapshot, the stamp of the commit it shows, and
	// whether to start a background merge of it (doc is its record).
	snap       *Snapshot
	stamp      fileStamp
	startMerge bool
	doc        commitRecord
	reply      chan introReply
}

type introReply struct {
	ok  bool
	err error
}

// errStoreClosed answers introductions sent after Close.
var errStoreClosed = errors.New("index store closed")

// startIntroducer starts the goroutine; Close stops it.
func (s *Store) startIntroducer() {
	s.intros = make(chan introduction)
	s.introDone = make(chan struct{})
	go s.introducer()
}

// introduce sends in and waits for the answer.
func (s *Store) introduce(in introduction) introReply {
	in.reply = make(chan introReply, 1)
	select {
	case s.intros <- in:
		return <-in.reply
	case <-s.introDone:
		return introReply{err: errStoreClosed}
	}
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
