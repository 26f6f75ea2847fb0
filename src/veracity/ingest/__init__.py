"""Source loaders: turn files into validated documents."""
