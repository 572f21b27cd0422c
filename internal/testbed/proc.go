package testbed

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// tempPrefix starts the name of every temp dir the test bed makes. The pid of
// the process that made it follows, so stale dirs of dead processes can be
// removed.
const tempPrefix = "kafkas3-testbed-"

// stopGrace is how long a child gets after SIGTERM before SIGKILL.
const stopGrace = 10 * time.Second

// child is one running service process in its own process group.
type child struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	logFile *os.File
	done    chan struct{}
	waitErr error

	stopOnce sync.Once
}

// startChild starts cmd in its own process group with SIGKILL as its parent
// death signal, stdout and stderr appended to logPath.
func startChild(name string, cmd *exec.Cmd, logPath string) (*child, error) {
	lf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("testbed: open %s log %s: %w", name, logPath, err)
	}
	cmd.Stdout = lf
	cmd.Stderr = lf
	cmd.Stdin = nil
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = lf.Close()
		return nil, fmt.Errorf("testbed: start %s (%s): %w", name, cmd.Path, err)
	}
	c := &child{name: name, cmd: cmd, logPath: logPath, logFile: lf, done: make(chan struct{})}
	go func() {
		c.waitErr = cmd.Wait()
		_ = lf.Close()
		close(c.done)
	}()
	return c, nil
}

// exited reports whether the process has ended.
func (c *child) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM to the process group, then SIGKILL after grace, and waits
// for the process to end. It is safe to call more than once.
func (c *child) stop(grace time.Duration) {
	c.stopOnce.Do(func() {
		pgid := c.cmd.Process.Pid
		if !c.exited() {
			_ = syscall.Kill(-pgid, syscall.SIGTERM)
			select {
			case <-c.done:
			case <-time.After(grace):
			}
		}
		// Kill whatever is left of the group, the leader included.
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-c.done
	})
}

// kill ends the process group at once (SIGKILL), without a grace period.
func (c *child) kill() {
	c.stopOnce.Do(func() {
		_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
		<-c.done
	})
}

// logTail returns the last n lines of the file at path, or a note saying why
// it could not be read.
func logTail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	b = bytes.TrimRight(b, "\n")
	lines := bytes.Split(b, []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("testbed: find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// freePorts returns n distinct ports freePort found.
func freePorts(n int) ([]int, error) {
	var ports []int
	for len(ports) < n {
		p, err := freePort()
		if err != nil {
			return nil, err
		}
		if !slices.Contains(ports, p) {
			ports = append(ports, p)
		}
	}
	return ports, nil
}

// makeTempDir makes a fresh temp dir for one service under parent (the system
// temp dir when empty), named after kind and this process's pid.
func makeTempDir(parent, kind string) (string, error) {
	if parent == "" {
		parent = os.TempDir()
	}
	dir, err := os.MkdirTemp(parent, fmt.Sprintf("%s%d-%s-", tempPrefix, os.Getpid(), kind))
	if err != nil {
		return "", fmt.Errorf("testbed: make %s temp dir: %w", kind, err)
	}
	return dir, nil
}

// removeStaleTempDirs removes temp dirs left under parent by test bed
// processes that no longer run (for example ones killed by SIGKILL).
func removeStaleTempDirs(parent string) {
	if parent == "" {
		parent = os.TempDir()
	}
	matches, _ := filepath.Glob(filepath.Join(parent, tempPrefix+"*"))
	for _, m := range matches {
		rest := strings.TrimPrefix(filepath.Base(m), tempPrefix)
		pidStr, _, ok := strings.Cut(rest, "-")
		if !ok {
			continue
		}
		pid, err := strconv.Atoi(pidStr)
		if err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		if err := syscall.Kill(pid, 0); err == nil || errors.Is(err, syscall.EPERM) {
			continue // still running
		}
		_ = os.RemoveAll(m)
	}
}

// runTool runs a short-lived command and returns its combined output; the
// error includes the output's tail.
func runTool(ctx context.Context, dir string, env []string, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	if env != nil {
		cmd.Env = env
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	out, err := cmd.CombinedOutput()
	if err != nil {
		tail := strings.TrimSpace(string(out))
		if len(tail) > 4000 {
			tail = "..." + tail[len(tail)-4000:]
		}
		return out, fmt.Errorf("testbed: %s %s: %w\n%s", name, strings.Join(args, " "), err, tail)
	}
	return out, nil
}
