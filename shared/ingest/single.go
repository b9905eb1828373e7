package ingest

import (
	"context"
	"errors"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/store"
)

// ErrEndpointDisabled: a disabled endpoint gets no event, not even a test.
var ErrEndpointDisabled = errors.New("the endpoint is disabled")

// enabledEndpoint is the account and one of its endpoints, which must exist (store.ErrNotFound) and be
// enabled (ErrEndpointDisabled).
func (s *Service) enabledEndpoint(ctx context.Context, accountID, endpointID string) (domain.Account, *domain.Endpoint, error) {
	acct, endpoints, err := s.Store.AccountWithEndpoints(ctx, accountID)
	if err != nil {
		return acct, nil, err
	}
	for i := range endpoints {
		if endpoints[i].ID != endpointID {
			continue
		}
		if endpoints[i].Disabled {
			return acct, nil, ErrEndpointDisabled
		}
		return acct, &endpoints[i], nil
	}
	return acct, nil, store.ErrNotFound
}

// IngestTo accepts body for one endpoint of the account only, whatever its
// event-type filter says: the portal's "send a test event". It is an event
// like any other from there on (stored, signed, retried, in the log).
func (s *Service) IngestTo(ctx context.Context, accountID, endpointID string, body []byte) (Result, error) {
	eventType, err := Validate(body)
	if err != nil {
		return Result{}, err
	}
	acct, ep, err := s.enabledEndpoint(ctx, accountID, endpointID)
	if err != nil {
		return Result{}, err
	}
	now := s.Now()
	ms := domain.Millis(now)
	ev := domain.Event{ID: domain.NewID("evt"), AccountID: accountID, Type: eventType, Body: body,
		ReceivedAt: ms, ExpiresAt: now.Add(domain.DefaultRetention).Unix()}
	d := newDelivery(accountID, ep.ID, ev.ID, eventType, ev.ExpiresAt, now)
	ev.DeliveryIDs, ev.EndpointIDs = []string{d.ID}, []string{ep.ID}
	slots, ivl, err := s.reserve(ctx, acct, 1, now) // and the request's gate (gate.go)
	if err != nil {
		return Result{}, err
	}
	deliveries := []domain.Delivery{d}
	if _, err := s.Store.CreateEvent(ctx, store.NewEvent{Event: ev, Deliveries: deliveries, DueAt: dueAt(slots, now), Unlisted: true}); err != nil {
		return Result{}, err
	}
	s.enqueue(ctx, []domain.Endpoint{*ep}, deliveries, slots, ivl, now, ev)
	s.Log.Info("test event accepted", "event_id", ev.ID, "account_id", accountID, "endpoint_id", ep.ID, "event_type", eventType)
	return Result{Event: ev, Deliveries: deliveries}, nil
}
