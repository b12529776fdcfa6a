"""The course lab: measurements that answer the course's questions about attention."""
