package ingest

import (
	"context"
	"errors"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/store"
)

// ErrEndpointDisabled: a disabled endpoint gets no event, not even a test.
var ErrEndpointDisabled = errors.New("the endpoint is disabled")

// IngestTo accepts body for one endpoint of the account only, whatever its
// event-type filter says: the portal's "send a test event". It is an event
// like any other from there on (stored, signed, retried, in the log).
func (s *Service) IngestTo(ctx context.Context, accountID, endpointID string, body []byte) (Result, error) {
	eventType, err := Validate(body)
	if err != nil {
		return Result{}, err
	}
	acct, endpoints, err := s.accountWithEndpoints(ctx, accountID) // with ctx's gate (the key's limit)
	if err != nil {
		return Result{}, err
	}
	var ep *domain.Endpoint
	for i := range endpoints {
		if endpoints[i].ID == endpointID {
			ep = &endpoints[i]
		}
	}
	switch {
	case ep == nil:
		return Result{}, store.ErrNotFound
	case ep.Disabled:
		return Result{}, ErrEndpointDisabled
	}
	now := s.Now()
	ms := domain.Millis(now)
	ev := domain.Event{ID: domain.NewID("evt"), AccountID: accountID, Type: eventType, Body: body,
		ReceivedAt: ms, ExpiresAt: now.Add(domain.DefaultRetention).Unix()}
	d := domain.Delivery{ID: domain.NewID("dlv"), EventID: ev.ID, EndpointID: ep.ID, AccountID: accountID, EventType: eventType,
		Status: domain.StatusPending, Gen: 1, Series: 1, NextAttemptAt: ms, CreatedAt: ms, UpdatedAt: ms, ExpiresAt: ev.ExpiresAt}
	ev.DeliveryIDs, ev.EndpointIDs = []string{d.ID}, []string{ep.ID}
	slots, ivl := s.reserve(ctx, acct, 1, now)
	deliveries := []domain.Delivery{d}
	if _, err := s.Store.CreateEvent(ctx, store.NewEvent{Event: ev, Deliveries: deliveries, DueAt: dueAt(slots, now), Unlisted: true}); err != nil {
		return Result{}, err
	}
	s.enqueue(ctx, deliveries, slots, ivl, now)
	s.Log.Info("test event accepted", "event_id", ev.ID, "account_id", accountID, "endpoint_id", ep.ID, "event_type", eventType)
	return Result{Event: ev, Deliveries: deliveries}, nil
}
