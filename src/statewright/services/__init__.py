"""Long-running loops: scheduler, executors and workers, DAG processor, triggerer."""
