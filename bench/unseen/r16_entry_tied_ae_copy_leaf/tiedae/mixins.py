class TiedWeightsMixin:
    """Keeps every TiedLinear equal to the transpose of its source layer."""

    def tied_pairs(self):
        for dec in self.decoder:
            yield dec, dec.source

    def tie_weights(self):
        for dec, enc in self.tied_pairs():
            dec.weight.copy_(enc.weight.t())
