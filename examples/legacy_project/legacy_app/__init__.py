"""A legacy training-loop skeleton written against torch.cuda."""
