//go:build integration

package bench

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"time"
)

// Peak RSS of a child process. getrusage's ru_maxrss of a child is not
// always its own: os/exec starts it with clone(CLONE_VM|CLONE_VFORK), and
// on exec Linux records the high-water RSS of the memory it leaves (this
// benchmark process's, shared until then) as the child's maxrss. A child
// that stays below the benchmark process's own peak (after the in-process
// read-back of a Parquet archive, for one) then reports that peak. So the
// child's VmHWM (the high-water RSS of its own memory since exec) is also
// read from /proc every rssPoll while it runs, and peakRSS takes it when
// ru_maxrss is no more than this process's own VmHWM. The poll may miss
// growth in the child's last rssPoll; ru_maxrss above this process's peak
// is the child's own, exact.

// rssPoll is how often a child's VmHWM is read.
const rssPoll = 20 * time.Millisecond

// runPolled runs cmd (not started) to completion like cmd.Run, reading its
// VmHWM meanwhile; it returns the highest VmHWM read, in KiB (0 when none
// was read), and Run's error.
func runPolled(cmd *exec.Cmd) (int64, error) {
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	// Start returns once the child has exec'd: its VmHWM is its own.
	path := "/proc/" + strconv.Itoa(cmd.Process.Pid) + "/status"
	var (
		mu   sync.Mutex
		peak int64
	)
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(rssPoll)
		defer t.Stop()
		for {
			if kib := vmHWM(path); kib > 0 {
				mu.Lock()
				peak = max(peak, kib)
				mu.Unlock()
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	err := cmd.Wait()
	close(done)
	<-stopped
	mu.Lock()
	defer mu.Unlock()
	return peak, err
}

// peakRSS is a child's peak RSS in KiB from its ru_maxrss and its polled
// VmHWM (polled), as the comment above says.
func peakRSS(maxrss, polled int64) int64 {
	if own := vmHWM("/proc/self/status"); polled > 0 && maxrss <= own {
		return polled
	}
	return maxrss
}

// vmHWM reads the VmHWM line of a /proc status file, in KiB; 0 when the
// file or the line is missing (the process has exited).
func vmHWM(path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if rest, ok := bytes.CutPrefix(line, []byte("VmHWM:")); ok {
			f := bytes.Fields(rest)
			if len(f) >= 1 {
				n, _ := strconv.ParseInt(string(f[0]), 10, 64)
				return n
			}
		}
	}
	return 0
}
