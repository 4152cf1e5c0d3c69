package pdapi

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// GetEvictLeaderSchedulers implements Reader.
func (c *pdClient) GetEvictLeaderSchedulers(ctx context.Context) ([]uint64, error) {
	ids, err := c.evictLeaderStores(ctx)
	return ids, wrap("GetEvictLeaderSchedulers", err)
}

// evictLeaderStores lists the stores with an evict-leader scheduler, ascending. Older PDs name one
// scheduler per store ("evict-leader-scheduler-5"); newer ones list a single "evict-leader-scheduler"
// whose configuration holds the store IDs. Names that carry no store ID are ignored.
func (c *pdClient) evictLeaderStores(ctx context.Context) ([]uint64, error) {
	var names []string
	if err := c.getJSON(ctx, schedulersPath, &names); err != nil {
		return nil, err
	}
	ids := []uint64{}
	combined := false
	for _, name := range names {
		if name == evictLeaderScheduler {
			combined = true
			continue
		}
		if id, ok := evictLeaderStoreID(name); ok {
			ids = append(ids, id)
		}
	}
	if combined {
		more, err := c.evictLeaderConfigStores(ctx)
		if err != nil {
			return nil, err
		}
		ids = append(ids, more...)
	}
	slices.Sort(ids)
	return slices.Compact(ids), nil
}

// evictLeaderStoreID parses "evict-leader-scheduler-<id>".
func evictLeaderStoreID(name string) (uint64, bool) {
	suffix, ok := strings.CutPrefix(name, evictLeaderScheduler+"-")
	if !ok {
		return 0, false
	}
	id, err := strconv.ParseUint(suffix, 10, 64)
	return id, err == nil
}

// evictLeaderConfigStores reads the store IDs of the combined evict-leader scheduler; 404 (the scheduler
// was removed since it was listed) means none.
func (c *pdClient) evictLeaderConfigStores(ctx context.Context) ([]uint64, error) {
	var cfg EvictLeaderSchedulerConfig
	err := c.getJSON(ctx, evictLeaderListPath, &cfg)
	if IsStatus(err, http.StatusNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	ids := make([]uint64, 0, len(cfg.StoreIDRanges))
	for key := range cfg.StoreIDRanges {
		if id, err := strconv.ParseUint(key, 10, 64); err == nil {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// BeginEvictLeader implements Writer.
func (c *pdClient) BeginEvictLeader(ctx context.Context, storeID uint64) error {
	body := SchedulerRequest{Name: evictLeaderScheduler, StoreID: storeID}
	resp, err := c.send(ctx, http.MethodPost, schedulersPath, body)
	if err != nil {
		return wrap("BeginEvictLeader", err)
	}
	if resp.status == http.StatusOK {
		return nil
	}
	// Because PD answers 500 "scheduler existed" for a repeated request, a listed scheduler is success.
	ids, err := c.evictLeaderStores(ctx)
	if err != nil {
		return wrap("BeginEvictLeader", fmt.Errorf("%w; then listing schedulers: %w", resp.statusError(), err))
	}
	if slices.Contains(ids, storeID) {
		return nil
	}
	return wrap("BeginEvictLeader", resp.statusError())
}

// EndEvictLeader implements Writer.
func (c *pdClient) EndEvictLeader(ctx context.Context, storeID uint64) error {
	path := schedulersPath + "/" + evictLeaderScheduler + "-" + strconv.FormatUint(storeID, 10)
	resp, err := c.send(ctx, http.MethodDelete, path, nil)
	if err != nil {
		return wrap("EndEvictLeader", err)
	}
	if resp.status == http.StatusNotFound {
		return nil
	}
	// Because some PD versions answer an error for a scheduler that is already gone (and a 200 does not
	// prove that the combined scheduler dropped the store), the listing decides.
	ids, err := c.evictLeaderStores(ctx)
	if err != nil {
		return wrap("EndEvictLeader", err)
	}
	if !slices.Contains(ids, storeID) {
		return nil
	}
	if resp.status == http.StatusOK {
		return wrap("EndEvictLeader", fmt.Errorf("evict-leader scheduler of store %d is still listed after DELETE %s%s", storeID, c.baseURL, path))
	}
	return wrap("EndEvictLeader", fmt.Errorf("evict-leader scheduler of store %d is still listed: %w", storeID, resp.statusError()))
}
