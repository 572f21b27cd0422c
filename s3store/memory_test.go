package s3store_test

import (
	"testing"

	"github.com/kafkas3/kafkas3/s3store"
	"github.com/kafkas3/kafkas3/s3store/storetest"
)

func TestMemoryConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) s3store.Store { return s3store.NewMemory() })
}
