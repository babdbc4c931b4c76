import torch
from torch import nn
from torch.nn import functional as F

from .layers import Attention, ConvNorm, LinearNorm, Postnet, Prenet
from .utils import get_mask_from_lengths


class Encoder(nn.Module):
    def __init__(self, hp):
        super().__init__()
        convolutions = []
        for _ in range(hp.encoder_n_convolutions):
            convolutions.append(nn.Sequential(
                ConvNorm(hp.encoder_embedding_dim, hp.encoder_embedding_dim,
                         kernel_size=hp.encoder_kernel_size, stride=1,
                         padding=int((hp.encoder_kernel_size - 1) / 2), dilation=1, w_init_gain="relu"),
                nn.BatchNorm1d(hp.encoder_embedding_dim)))
        self.convolutions = nn.ModuleList(convolutions)
        self.lstm = nn.LSTM(hp.encoder_embedding_dim, int(hp.encoder_embedding_dim / 2), 1,
                            batch_first=True, bidirectional=True)

    def forward(self, x, input_lengths):
        for conv in self.convolutions:
            x = F.dropout(F.relu(conv(x)), 0.5, self.training)
        x = x.transpose(1, 2)
        x = nn.utils.rnn.pack_padded_sequence(x, input_lengths, batch_first=True)
        outputs, _ = self.lstm(x)
        outputs, _ = nn.utils.rnn.pad_packed_sequence(outputs, batch_first=True)
        return outputs


class Decoder(nn.Module):
    def __init__(self, hp):
        super().__init__()
        self.n_mel_channels = hp.n_mel_channels
        self.encoder_embedding_dim = hp.encoder_embedding_dim
        self.attention_rnn_dim = hp.attention_rnn_dim
        self.decoder_rnn_dim = hp.decoder_rnn_dim
        self.p_attention_dropout = hp.p_attention_dropout
        self.p_decoder_dropout = hp.p_decoder_dropout
        self.prenet = Prenet(hp.n_mel_channels, [hp.prenet_dim, hp.prenet_dim])
        self.attention_rnn = nn.LSTMCell(hp.prenet_dim + hp.encoder_embedding_dim, hp.attention_rnn_dim)
        self.attention_layer = Attention(hp.attention_rnn_dim, hp.encoder_embedding_dim, hp.attention_dim,
                                         hp.attention_location_n_filters, hp.attention_location_kernel_size)
        self.decoder_rnn = nn.LSTMCell(hp.attention_rnn_dim + hp.encoder_embedding_dim, hp.decoder_rnn_dim, 1)
        self.linear_projection = LinearNorm(hp.decoder_rnn_dim + hp.encoder_embedding_dim, hp.n_mel_channels)
        self.gate_layer = LinearNorm(hp.decoder_rnn_dim + hp.encoder_embedding_dim, 1, bias=True,
                                     w_init_gain="sigmoid")

    def get_go_frame(self, memory):
        return memory.new_zeros(memory.size(0), self.n_mel_channels)

    def initialize_decoder_states(self, memory, mask):
        B, MAX_TIME = memory.size(0), memory.size(1)
        self.attention_hidden = memory.new_zeros(B, self.attention_rnn_dim)
        self.attention_cell = memory.new_zeros(B, self.attention_rnn_dim)
        self.decoder_hidden = memory.new_zeros(B, self.decoder_rnn_dim)
        self.decoder_cell = memory.new_zeros(B, self.decoder_rnn_dim)
        self.attention_weights = memory.new_zeros(B, MAX_TIME)
        self.attention_weights_cum = memory.new_zeros(B, MAX_TIME)
        self.attention_context = memory.new_zeros(B, self.encoder_embedding_dim)
        self.memory = memory
        self.processed_memory = self.attention_layer.memory_layer(memory)
        self.mask = mask

    def parse_decoder_inputs(self, decoder_inputs):
        # (B, n_mel, T_out) -> (T_out, B, n_mel)
        return decoder_inputs.transpose(1, 2).transpose(0, 1)

    def parse_decoder_outputs(self, mel_outputs, gate_outputs, alignments):
        alignments = torch.stack(alignments).transpose(0, 1)
        gate_outputs = torch.stack(gate_outputs).transpose(0, 1).contiguous()
        mel_outputs = torch.stack(mel_outputs).transpose(0, 1).contiguous()
        mel_outputs = mel_outputs.view(mel_outputs.size(0), -1, self.n_mel_channels)
        mel_outputs = mel_outputs.transpose(1, 2)
        return mel_outputs, gate_outputs, alignments

    def decode(self, decoder_input):
        cell_input = torch.cat((decoder_input, self.attention_context), -1)
        self.attention_hidden, self.attention_cell = self.attention_rnn(
            cell_input, (self.attention_hidden, self.attention_cell))
        self.attention_hidden = F.dropout(self.attention_hidden, self.p_attention_dropout, self.training)
        attention_weights_cat = torch.cat(
            (self.attention_weights.unsqueeze(1), self.attention_weights_cum.unsqueeze(1)), dim=1)
        self.attention_context, self.attention_weights = self.attention_layer(
            self.attention_hidden, self.memory, self.processed_memory, attention_weights_cat, self.mask)
        self.attention_weights_cum += self.attention_weights
        decoder_input = torch.cat((self.attention_hidden, self.attention_context), -1)
        self.decoder_hidden, self.decoder_cell = self.decoder_rnn(
            decoder_input, (self.decoder_hidden, self.decoder_cell))
        self.decoder_hidden = F.dropout(self.decoder_hidden, self.p_decoder_dropout, self.training)
        hidden_context = torch.cat((self.decoder_hidden, self.attention_context), dim=1)
        return self.linear_projection(hidden_context), self.gate_layer(hidden_context), self.attention_weights

    def forward(self, memory, decoder_inputs, memory_lengths):
        decoder_input = self.get_go_frame(memory).unsqueeze(0)
        decoder_inputs = self.parse_decoder_inputs(decoder_inputs)
        decoder_inputs = torch.cat((decoder_input, decoder_inputs), dim=0)
        decoder_inputs = self.prenet(decoder_inputs)
        self.initialize_decoder_states(memory, mask=~get_mask_from_lengths(memory_lengths))
        mel_outputs, gate_outputs, alignments = [], [], []
        while len(mel_outputs) < decoder_inputs.size(0) - 1:
            decoder_input = decoder_inputs[len(mel_outputs)]
            mel_output, gate_output, attention_weights = self.decode(decoder_input)
            mel_outputs += [mel_output.squeeze(1)]
            gate_outputs += [gate_output.squeeze(1)]
            alignments += [attention_weights]
        return self.parse_decoder_outputs(mel_outputs, gate_outputs, alignments)


class Tacotron2(nn.Module):
    def __init__(self, hp):
        super().__init__()
        self.mask_padding = hp.mask_padding
        self.n_mel_channels = hp.n_mel_channels
        self.embedding = nn.Embedding(hp.n_symbols, hp.symbols_embedding_dim)
        self.encoder = Encoder(hp)
        self.decoder = Decoder(hp)
        self.postnet = Postnet(hp)

    def parse_output(self, outputs, output_lengths=None):
        if self.mask_padding and output_lengths is not None:
            mask = ~get_mask_from_lengths(output_lengths)
            mask = mask.expand(self.n_mel_channels, mask.size(0), mask.size(1))
            mask = mask.permute(1, 0, 2)

            # out of place: the postnet's first conv saved outputs[0] (mel_outputs) for backward
            outputs[0] = outputs[0].masked_fill(mask, 0.0)
            outputs[1] = outputs[1].masked_fill(mask, 0.0)
            outputs[2] = outputs[2].masked_fill(mask[:, 0, :], 1e3)  # gate energies
        return outputs

    def forward(self, inputs):
        text_inputs, text_lengths, mels, output_lengths = inputs
        embedded_inputs = self.embedding(text_inputs).transpose(1, 2)
        encoder_outputs = self.encoder(embedded_inputs, text_lengths)
        mel_outputs, gate_outputs, alignments = self.decoder(
            encoder_outputs, mels, memory_lengths=text_lengths)
        mel_outputs_postnet = self.postnet(mel_outputs)
        mel_outputs_postnet = mel_outputs + mel_outputs_postnet
        return self.parse_output([mel_outputs, mel_outputs_postnet, gate_outputs, alignments],
                                 output_lengths)
