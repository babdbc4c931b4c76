"""gradmon: residual MLP classifier with per-block gradient monitoring through module hooks."""
