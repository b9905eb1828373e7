package queue

// Gathering is how many messages wait, gathered for the next request.
func (q *Queue) Gathering() int {
	q.fast.mu.Lock()
	defer q.fast.mu.Unlock()
	if q.fast.gathering == nil {
		return 0
	}
	return len(q.fast.gathering.entries)
}
