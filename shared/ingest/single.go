package ingest

import (
	"context"
	"errors"
	"log/slog"

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

// Notify accepts a system event (domain.IsSystemEvent) that the service
// itself makes about the account's endpoint about: it goes to the account's
// enabled endpoints that name its type in their filter, never to about
// itself (a failing notification endpoint is not told of itself, and no
// notice loops). key makes it happen once: an event already accepted with
// the same key drops this one (sent false). When no endpoint subscribes,
// nothing is written.
func (s *Service) Notify(ctx context.Context, accountID, about string, body []byte, key string) (sent bool, err error) {
	eventType, err := Validate(body)
	if err != nil {
		return false, err
	}
	if !domain.IsSystemEvent(eventType) {
		return false, ErrBadEventType
	}
	acct, endpoints, err := s.Store.AccountWithEndpoints(ctx, accountID)
	if err != nil {
		return false, err
	}
	if !anySubscribes(endpoints, about, eventType) {
		return false, nil
	}
	// Sent already (another attempt saw the same change, or the same kind
	// earlier today): one read, rather than writing the deliveries first.
	if _, err := s.Store.PriorEvent(ctx, accountID, key, body); !errors.Is(err, store.ErrNotFound) {
		if errors.Is(err, store.ErrDuplicate) || errors.Is(err, store.ErrIdempotencyMismatch) {
			err = nil
		}
		return false, err
	}
	others := make([]domain.Endpoint, 0, len(endpoints))
	for _, ep := range endpoints {
		if ep.ID != about {
			others = append(others, ep)
		}
	}
	now := s.Now()
	ne := fanOut(accountID, others, checked{body: body, eventType: eventType, idempotencyKey: key}, now)
	if len(ne.Deliveries) == 0 {
		return false, nil
	}
	slots, ivl, err := s.reserve(ctx, acct, len(ne.Deliveries), now)
	if err != nil {
		return false, err
	}
	ne.DueAt = dueAt(slots, now)
	if _, err := s.Store.CreateEvent(ctx, ne); errors.Is(err, store.ErrDuplicate) || errors.Is(err, store.ErrIdempotencyMismatch) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	s.enqueue(ctx, others, ne.Deliveries, slots, ivl, now, ne.Event)
	s.accepted(ctx, ne, slog.LevelInfo)
	return true, nil
}

// anySubscribes: an enabled endpoint other than about takes eventType.
func anySubscribes(endpoints []domain.Endpoint, about, eventType string) bool {
	for _, ep := range endpoints {
		if ep.ID != about && !ep.Disabled && ep.Subscribes(eventType) {
			return true
		}
	}
	return false
}
