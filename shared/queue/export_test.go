package queue

// Gathering is how many messages wait, gathered for the next request.
func (q *Queue) Gathering() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.gathering == nil {
		return 0
	}
	return len(q.gathering.entries)
}
