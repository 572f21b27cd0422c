package metrics

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/kafkas3/kafkas3/archive"
	"github.com/kafkas3/kafkas3/health"
	"github.com/prometheus/client_golang/prometheus"
)

var errTest = errors.New("connection refused")

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func TestServerEndpoints(t *testing.T) {
	reg := prometheus.NewRegistry()
	ready := health.NewReadiness(nil)
	if err := RegisterProcess(reg, ready); err != nil {
		t.Fatal(err)
	}
	s, err := NewSink(reg, ready)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := Listen("127.0.0.1:0", reg, ready, nil)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	defer srv.Close()
	base := "http://" + srv.Addr()

	ready.Expect(health.Broker)
	if code, body := get(t, base+"/healthz"); code != 200 || body != "ok\n" {
		t.Errorf("/healthz = %d %q", code, body)
	}
	if code, body := get(t, base+"/readyz"); code != 503 || !strings.Contains(body, "broker: not yet connected") {
		t.Errorf("/readyz before connecting = %d %q", code, body)
	}
	s.Partition("orders", 3).Completed([]archive.FileStats{{Key: "k", Records: 42, Bytes: 4200}})
	ready.SetUp(health.Broker)
	if code, body := get(t, base+"/readyz"); code != 200 || body != "ready\n" {
		t.Errorf("/readyz connected = %d %q", code, body)
	}
	ready.SetDown(health.Store, errTest)
	code, body := get(t, base+"/metrics")
	if code != 200 {
		t.Fatalf("/metrics = %d", code)
	}
	for _, want := range []string{
		`kafkas3_sink_records_total{topic="orders"} 42`,
		`kafkas3_sink_bytes_total{topic="orders"} 4200`,
		`kafkas3_sink_objects_total{topic="orders"} 1`,
		`kafkas3_sink_assigned_partitions 1`,
		`kafkas3_dependency_up{dependency="broker"} 1`,
		`kafkas3_dependency_up{dependency="store"} 0`,
		`kafkas3_sink_open_files 0`,
		`kafkas3_sink_upload_duration_seconds_count 0`,
		"process_open_fds ",
		"go_goroutines ",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if code, _ := get(t, base+"/readyz"); code != 503 {
		t.Errorf("/readyz with the store down = %d", code)
	}
}

func TestListenBadAddress(t *testing.T) {
	srv, err := Listen("127.0.0.1:0", prometheus.NewRegistry(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if _, err := Listen(srv.Addr(), prometheus.NewRegistry(), nil, nil); err == nil || !strings.Contains(err.Error(), "--metrics-addr "+srv.Addr()) {
		t.Fatalf("an address in use: %v", err)
	}
}
