"""The course lab (issue 12): measurements that answer the course's questions about attention."""
